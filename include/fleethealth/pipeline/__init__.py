"""Pipeline: an hour's layers run in one Spark application, as spark-submit starts them.

In: the arguments of a spark-submit entry point (spark/). Out: one Spark session running the chosen
layers' jobs of an hour in order, each gated, exit status 1 at the first gate that failed (`submit`).
Owns no table.
"""
