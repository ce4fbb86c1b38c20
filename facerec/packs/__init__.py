"""Model packs: a detector, landmarks, an alignment, an embedder and the files calibrated for them, chosen as one."""
