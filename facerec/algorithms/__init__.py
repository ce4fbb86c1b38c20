"""Algorithms over embeddings and ids alone, with no database, model or gallery: grouping unknown faces into people
(`grouping`) and seeded samples of whole people (`people_sample`). The gallery's services run them on what they read
from the store; benchmarks and tests run them on arrays."""
