#!/usr/bin/env bash
# Measure the shipped model: every results file the model card and the README's tables read, then the card.
#   pip install -e ".[train]" && bash scripts/measure.sh            # ~1 h on 2 cores; resumes: a step whose results
#                                                                    # file already measured this model is skipped
# Each results file records its provenance (model sha256, commit, CPU and flags, threads, date), and
# scripts/make_model_card.py refuses any that measured another model file. retrain.sh ends with this script.
# The peer rows need face_recognition beside the train extra's dlib:
#   pip install --no-deps face_recognition "setuptools<81"
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${FACEREC_DATA:-../shared/data}
MODEL=models/facerec-r18-arcface.onnx
RESULTS=benchmarks/results
SHA=$(sha256sum "$MODEL" | cut -d' ' -f1)
mkdir -p cache "$RESULTS"
measured() {  # measured FILE: true when FILE's provenance names the shipped model file
    python - "$1" "$SHA" <<'PY'
import json, sys
from pathlib import Path
path = Path(sys.argv[1])
record = json.loads(path.read_text()).get("provenance", {}) if path.exists() else {}
sys.exit(0 if record.get("model_sha256") == sys.argv[2] else 1)
PY
}
step() {  # step FILE COMMAND...: run COMMAND unless FILE already measured this model
    local file=$1
    shift
    if measured "$file"; then echo "measured already: $file"; else echo "measuring: $file"; "$@"; fi
}
# The self-check reference first: every measurement below then runs the path a user's embedder takes.
python scripts/make_model_card.py --self-check-only
# Timed steps first, while nothing else runs (keep the machine quiet for these few minutes).
step $RESULTS/peer.json python benchmarks/peer.py --data "$DATA" --out $RESULTS/peer.json
step $RESULTS/speed_1thread.json python benchmarks/speed.py --data "$DATA" --threads 1 --out $RESULTS/speed_1thread.json
step $RESULTS/speed_all.json python benchmarks/speed.py --data "$DATA" --threads 0 --out $RESULTS/speed_all.json
[ "$(python -c "import json; print(json.load(open('models/training/calibration.json')).get('model_sha256'))")" = "$SHA" ] \
    || facerec-train calibrate --model "$MODEL" --data "$DATA" --json models/training/calibration.json
[ "$(python -c "import json; print(json.load(open('${MODEL%.onnx}.quality.json')).get('model_sha256'))")" = "$SHA" ] \
    || python scripts/calibrate_quality.py --data "$DATA"
step $RESULTS/eval_lfw2.json facerec eval "$DATA/lfw" --max-per-identity 2 --json $RESULTS/eval_lfw2.json
step $RESULTS/eval_lfw2_distractors.json facerec eval "$DATA/lfw" --max-per-identity 2 --distractors --open-set \
    --json $RESULTS/eval_lfw2_distractors.json
step $RESULTS/eval_pairs.json facerec eval-pairs "$DATA/protocols/lfw_pairs.txt" "$DATA/lfw" \
    --json $RESULTS/eval_pairs.json
[ -f cache/lfw/results.tsv ] || facerec-train prepare "$DATA/lfw" cache/lfw
step $RESULTS/enrollment_quality.json python benchmarks/enrollment_quality.py --cache cache/lfw \
    --json $RESULTS/enrollment_quality.json
step $RESULTS/peer_pairs.json python benchmarks/peer.py --data "$DATA" --pairs --out $RESULTS/peer_pairs.json
step $RESULTS/lookalike_refusal.json python benchmarks/lookalike_refusal.py --lfw "$DATA/lfw" \
    --json $RESULTS/lookalike_refusal.json
step $RESULTS/sightings_health.json python benchmarks/sightings_health.py --data "$DATA" \
    --json $RESULTS/sightings_health.json
python scripts/make_model_card.py
python scripts/results_tables.py --write
