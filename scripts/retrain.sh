#!/usr/bin/env bash
# Reproduce the shipped model from ../shared/data on this machine: one command, every step resumable.
#   pip install -e ".[train]" && bash scripts/retrain.sh            # add --device cuda to train on a GPU
# 1. align LFW into cache/lfw (RetinaFace + facerec.faces.align, the runtime's own code);
# 2. dlib teacher descriptors of the LFW training people (celeba112's ship with the data);
# 3. warm start: model v3 as it shipped (commit 5065c8a, itself made by this script at that commit from v2),
#    read from this repository's history;
# 4. ArcFace + distillation training in stages of the same losses, each a cosine schedule from the previous
#    stage's end: runs/v4 (4 epochs from v3, peak lr 0.015), runs/v5 (3 epochs from v4, lr 0.01), runs/v6
#    (3 epochs, lr 0.01, distillation weight 40, from the average of v4 and v5), runs/v7 (3 epochs, lr 0.01,
#    distillation weight 40 and the batch's similarity structure matched to the teacher's x100, from the average
#    of v4, v5 and v6), runs/v8 (the same as v7, from the average of v6 and v7); then model v9's two arms from v8
#    as shipped (54 epochs each: a GPU's work, `--device cuda`). bf16 autocast where the CPU has
#    native bf16, else fp32; a checkpoint per epoch: run the same command again to resume after an interruption
#    (a resumed call's seconds are added to the earlier calls' in $STEPS; a finished stage is skipped);
# 5. export each stage to ONNX (checked against torch); the run makes its own choices, on the held-out selection
#    identities, never LFW: which stages to average (benchmarks/stage_average.py over every stage ->
#    models/training/stage_average.json; the average, or a single stage when no average beats it), then whether int8
#    keeps held-out rank-1 within 0.5 point of fp32 (benchmarks/embedding_options.py -> the shipped precision);
#    threshold calibration; then scripts/measure.sh measures every figure the card and the docs read (LFW, the peer,
#    speed, open set) on what this run made, and writes the card. Nothing is typed in: a retrain that ends in
#    another model ships that model with its own figures.
# Each step's wall time goes to models/training/retrain_steps.json, which the model card reports; the run's inputs
# (commit, the data manifest's sha256, the warm start's sha256, the CPU) to models/training/retrain_run.json.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${FACEREC_DATA:-../shared/data}
V3_COMMIT=5065c8a  # the commit that shipped model v3 (high-resolution stem, int8; ArcFace + distillation from v2)
STEPS=models/training/retrain_steps.json
mkdir -p cache runs models/training
timed() {  # timed NAME RUN_DIR COMMAND...: run, then record NAME's wall seconds in $STEPS (added to the earlier
    #        calls' when RUN_DIR holds a checkpoint to resume from; "" for a step that does not resume)
    local name=$1 run=$2 started=$SECONDS resuming=0
    shift 2
    [ -n "$run" ] && [ -f "$run/last.ckpt" ] && resuming=1
    "$@"
    python - "$STEPS" "$name" $((SECONDS - started)) $resuming <<'PY'
import json, sys
from pathlib import Path
path, name, seconds, resuming = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
steps = json.loads(path.read_text()) if path.exists() else {}
steps[name] = seconds + (steps.get(name, 0) if resuming else 0)
path.write_text(json.dumps(steps, indent=1) + "\n")
PY
}
complete() {  # complete CACHE: every photo of the cache's manifest has its detection result (a finished prepare)
    [ -f "$1/results.tsv" ] && [ "$(wc -l < "$1/results.tsv")" -eq "$(wc -l < "$1/manifest.tsv")" ]
}
complete cache/lfw || timed prepare_lfw "" facerec-train prepare "$DATA/lfw" cache/lfw  # resumes a partial cache
[ -f cache/lfw_teacher.npz ] || timed teacher_targets_lfw "" \
    facerec-train teacher-targets cache/lfw cache/lfw_teacher.npz --training-only
[ -f cache/v3.onnx ] || git show "$V3_COMMIT:models/facerec-r18-arcface.onnx" > cache/v3.onnx
python - "$DATA" cache/v3.onnx "$*" <<'PY'  # what this run starts from, so a reader can tell two runs apart
import hashlib, json, subprocess, sys
from pathlib import Path
from facerec.cpu import describe_cpu
from facerec.provenance import file_sha256
data, warm, arguments = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
manifest = hashlib.sha256()
for folder in ("celeba112", "lfw"):
    for path in sorted((data / folder).rglob("*")):
        if path.is_file():
            manifest.update(f"{path.relative_to(data)}\t{path.stat().st_size}\n".encode())
manifest.update(file_sha256(data / "teacher" / "celeba112_dlib.npz").encode())
commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout
Path("models/training/retrain_run.json").write_text(json.dumps({
    "commit": commit + ("+changes" if dirty.strip() else ""), "arguments": arguments,
    "data_manifest_sha256": manifest.hexdigest(), "warm_start_sha256": file_sha256(warm),
    "cpu": describe_cpu().to_dict()},
    indent=1) + "\n")
PY
stage() {  # stage NAME WARM_START EPOCHS LR DISTILL_WEIGHT [ARGS...]: train runs/NAME (skipped once exported),
    #        export it, keep its logs in the card's lineage
    local name=$1 warm=$2 epochs=$3 lr=$4 distill=$5 run=runs/$1
    shift 5
    if [ ! -f "$run/model_fp32.onnx" ]; then
        timed "train_$name" "$run" facerec-train train --celeba "$DATA/celeba112" --lfw-cache cache/lfw \
            --teacher "$DATA/teacher/celeba112_dlib.npz" cache/lfw_teacher.npz --warm-start "$warm" \
            --run-dir "$run" --stem high_res --epochs "$epochs" --batch-size 128 --lr "$lr" --warmup-epochs 0.1 \
            --arcface-weight 1 --distill-weight "$distill" "$@"
        timed "export_$name" "" facerec-train export-onnx "$run/best.pt" "$run/model_fp32.onnx" --check-cache cache/lfw
    fi
    mkdir -p "models/training/lineage/$name"
    cp "$run/train_log.jsonl" "models/training/lineage/$name/train_log.jsonl"
    cp "$run/config.json" "models/training/lineage/$name/train_config.json"
}
stage v4 cache/v3.onnx 4 0.015 30 "$@"
stage v5 runs/v4/model_fp32.onnx 3 0.01 30 "$@"
[ -f runs/v6_warm.onnx ] || timed average_v4_v5 "" \
    facerec-train average runs/v6_warm.onnx runs/v4/model_fp32.onnx runs/v5/model_fp32.onnx
stage v6 runs/v6_warm.onnx 3 0.01 40 "$@"
[ -f runs/v7_warm.onnx ] || timed average_v4_v6 "" \
    facerec-train average runs/v7_warm.onnx runs/v4/model_fp32.onnx runs/v5/model_fp32.onnx runs/v6/model_fp32.onnx
stage v7 runs/v7_warm.onnx 3 0.01 40 --structure-weight 100 "$@"
[ -f runs/v8_warm.onnx ] || timed average_v6_v7 "" \
    facerec-train average runs/v8_warm.onnx runs/v6/model_fp32.onnx runs/v7/model_fp32.onnx
stage v8 runs/v8_warm.onnx 3 0.01 40 --structure-weight 100 "$@"
# Model v8 as it shipped: the average of v6, v7 and v8 (chosen on held-out identities by benchmarks/stage_average.py
# then), in int8 with 7-bit weights: the warm start of v9.
[ -f runs/v8_averaged_fp32.onnx ] || timed average_v6_v8 "" facerec-train average runs/v8_averaged_fp32.onnx \
    runs/v6/model_fp32.onnx runs/v7/model_fp32.onnx runs/v8/model_fp32.onnx
[ -f runs/v8_int8.onnx ] || timed quantize_v8 "" facerec-train quantize runs/v8_averaged_fp32.onnx runs/v8_int8.onnx \
    --celeba "$DATA/celeba112"
# Model v9: two arms of 54 epochs each from v8, batch 512, peak lr 0.02 after a one-epoch warm-up, ArcFace +
# distillation x40 (no batch structure term: the recipe diagnostic in docs/model.md), the second arm adding the
# threshold-crossing term and flip-invariant teacher targets. Minutes on a GPU (--device cuda; the shipped arms ran
# side by side on one H200 through scripts/device_training.py, which only carries the data there), days on 2 cores.
stage v9_control runs/v8_int8.onnx 54 0.02 40 --batch-size 512 --warmup-epochs 1 "$@"
stage v9_tail_flip runs/v8_int8.onnx 54 0.02 40 --batch-size 512 --warmup-epochs 1 --tail-weight 1 \
    --flip-invariant-targets "$@"
cp runs/v9_tail_flip/train_log.jsonl models/training/train_log.jsonl  # the last stage: the card's shipped run
cp runs/v9_tail_flip/config.json models/training/train_config.json
# The run's own choices, on held-out selection identities: which arms to average...
[ -f models/training/stage_average.json ] && [ models/training/stage_average.json -nt runs/v9_tail_flip/model_fp32.onnx ] \
    || timed stage_average "" python benchmarks/stage_average.py --data "$DATA" \
        $(for stage in v9_control v9_tail_flip; do echo "--stage ${stage#v9_}=runs/$stage/model_fp32.onnx"; done) \
        --out models/training/stage_average.json
AVERAGED=$(python -c "import json; print(' '.join('v9_' + s for s in json.load(open('models/training/stage_average.json'))['chosen']['stages']))")
if [ "$(echo $AVERAGED | wc -w)" -gt 1 ]; then
    timed average "" facerec-train average runs/averaged_fp32.onnx $(for run in $AVERAGED; do echo "runs/$run/model_fp32.onnx"; done)
else
    cp "runs/$AVERAGED/model_fp32.onnx" runs/averaged_fp32.onnx
fi
# ...and int8 (7-bit weights) or fp32: int8 when it keeps held-out rank-1 within 0.5 point (embedding_options' rule).
timed quantize "" facerec-train quantize runs/averaged_fp32.onnx runs/averaged_int8.onnx --celeba "$DATA/celeba112"
timed embedding_options "" python benchmarks/embedding_options.py --data "$DATA" --model runs/averaged_fp32.onnx --int8 \
    --out benchmarks/results/embedding_options.json
CHOSEN=$(python -c "import json; print(json.load(open('benchmarks/results/embedding_options.json'))['chosen']['name'])")
cp "runs/averaged_$CHOSEN.onnx" models/facerec-r18-arcface.onnx
timed calibrate "" facerec-train calibrate --data "$DATA" --json models/training/calibration.json
# Every figure of the card and the docs, measured on what this run made (LFW, the peer, speed, open set), and the card.
bash scripts/measure.sh
