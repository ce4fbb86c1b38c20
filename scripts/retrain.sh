#!/usr/bin/env bash
# Retrain the shipped model from scratch (needs the train extra: pip install -e ".[train]").
# On one H200 this took 90 s of training; on this project's 2-core CPU (AVX2, no native bf16) pass --fp32
# (bash scripts/retrain.sh --fp32) and expect about two days.
set -euo pipefail
DATA=${FACEREC_DATA:-../shared/data}
facerec prepare "$DATA/lfw" cache/lfw
facerec train --celeba "$DATA/celeba112" --lfw-cache cache/lfw --run-dir runs/r18_arcface \
    --epochs 30 --head arcface --stem high_res --batch-size 512 --lr 0.1 "$@"
facerec export-onnx runs/r18_arcface/best.pt models/facerec-r18-arcface.onnx --check-cache cache/lfw
python scripts/calibrate_threshold.py --data "$DATA" --out models/training/calibration.json
