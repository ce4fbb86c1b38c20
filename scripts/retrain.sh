#!/usr/bin/env bash
# Reproduce the shipped model from ../shared/data on this machine: one command, every step resumable.
#   pip install -e ".[train]" && bash scripts/retrain.sh            # add --device cuda to train on a GPU
# 1. align LFW into cache/lfw (RetinaFace + facerec.align, the runtime's own code);
# 2. dlib teacher descriptors of the LFW training people (celeba112's ship with the data);
# 3. warm start: model v3 as it shipped (commit 5065c8a, itself made by this script at that commit from v2),
#    read from this repository's history;
# 4. ArcFace + distillation training in two stages of the same losses, each a cosine schedule: runs/v4 (4 epochs
#    from v3, peak lr 0.015), exported, then runs/v5 (3 epochs from v4, peak lr 0.01), what ships. bf16 autocast
#    where the CPU has native bf16, else fp32; a checkpoint per epoch: run the same command again to resume after
#    an interruption (a resumed call's seconds are added to the earlier calls' in $STEPS; a finished stage is
#    skipped);
# 5. export to ONNX (checked against torch), int8 quantisation and centering (what ships:
#    benchmarks/embedding_options.py chose both on held-out identities), threshold calibration, model card.
# Each step's wall time goes to models/training/retrain_steps.json, which the model card reports.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${FACEREC_DATA:-../shared/data}
V3_COMMIT=5065c8a  # the commit that shipped model v3 (high-resolution stem, int8; ArcFace + distillation from v2)
STAGE=runs/v4      # the intermediate stage, kept in the card's lineage
RUN=runs/v5        # the stage that ships
CENTER_STRENGTH=0.75 # share of the mean training embedding the shipped graph subtracts (embedding_options chose it)
STEPS=models/training/retrain_steps.json
mkdir -p cache runs models/training
timed() {  # timed NAME COMMAND...: run, then record NAME's wall seconds in $STEPS (added to, when resuming)
    local name=$1 started=$SECONDS resuming=0
    shift
    [ "$name" = train ] && [ -f "$RUN/last.ckpt" ] && resuming=1
    [ "$name" = train_v4 ] && [ -f "$STAGE/last.ckpt" ] && resuming=1
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
complete cache/lfw || timed prepare_lfw facerec prepare "$DATA/lfw" cache/lfw  # resumes a partial cache
[ -f cache/lfw_teacher.npz ] || timed teacher_targets_lfw \
    facerec teacher-targets cache/lfw cache/lfw_teacher.npz --training-only
[ -f cache/v3.onnx ] || git show "$V3_COMMIT:models/facerec-r18-arcface.onnx" > cache/v3.onnx
train_stage() {  # train_stage WARM_START RUN_DIR EPOCHS LR [ARGS...]: one stage of the recipe
    local warm=$1 run=$2 epochs=$3 lr=$4
    shift 4
    facerec train --celeba "$DATA/celeba112" --lfw-cache cache/lfw \
        --teacher "$DATA/teacher/celeba112_dlib.npz" cache/lfw_teacher.npz --warm-start "$warm" \
        --run-dir "$run" --stem high_res --epochs "$epochs" --batch-size 128 --lr "$lr" --warmup-epochs 0.1 \
        --arcface-weight 1 --distill-weight 30 "$@"
}
if [ ! -f $STAGE/model_fp32.onnx ]; then
    timed train_v4 train_stage cache/v3.onnx $STAGE 4 0.015 "$@"
    timed export_v4 facerec export-onnx $STAGE/best.pt $STAGE/model_fp32.onnx --check-cache cache/lfw
fi
mkdir -p models/training/lineage/v4
cp $STAGE/train_log.jsonl models/training/lineage/v4/train_log.jsonl
cp $STAGE/config.json models/training/lineage/v4/train_config.json
timed train train_stage $STAGE/model_fp32.onnx $RUN 3 0.01 "$@"
timed export facerec export-onnx $RUN/best.pt $RUN/model_fp32.onnx --check-cache cache/lfw
timed quantize facerec quantize $RUN/model_fp32.onnx $RUN/model_int8.onnx --celeba "$DATA/celeba112"
timed center facerec center $RUN/model_int8.onnx models/facerec-r18-arcface.onnx --strength $CENTER_STRENGTH \
    --celeba "$DATA/celeba112"
cp $RUN/train_log.jsonl models/training/train_log.jsonl
cp $RUN/config.json models/training/train_config.json
timed calibrate facerec calibrate --data "$DATA" --json models/training/calibration.json
python scripts/make_model_card.py
