"""The blocks scripts/results_tables.py writes into the docs, one module per kind of result."""
