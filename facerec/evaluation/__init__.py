"""Batch evaluation of galleries: one-shot identification (CMC, open-set DIR/FPIR, TAR@FAR, embedding
metrics) and LFW-style pair verification, with JSON and plotted reports."""
