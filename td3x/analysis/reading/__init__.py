"""What the report reads: run dirs found and loaded (``runs``: eval.csv, summary.json, provenance.json and
metrics.jsonl through rundir/'s one reader each), the files named on td3x-report's command line (``input_files``),
the paper's published numbers and curves (``paper``), runs grouped into rows × envs (``cells``) and each cell's
numbers (``cell_stats``), and a seed study's runs sorted by the source of randomness they vary
(``source_studies``). It imports ``stats`` below it, and config/, algo/, host/ and rundir/.
"""
