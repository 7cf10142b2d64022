"""How code starts: config, the Spark session and its conf, class-data-sharing options, job arguments.

In: the environment (every `FLEETHEALTH_*` setting is read through `config`, with its type, default
and doc). Out: a Delta-enabled SparkSession (`session`), the settings every Spark application gets
(`spark_conf`, also given to the DAG's SparkSubmitOperators), the spark-submit entry points' arguments
and main body (`jobargs`), and small DataFrame helpers of the jobs (`frames`). Beside them, what every
layer shares: files and settings validated into one-line mistakes (`validation`, pydantic models) and
the incident severities (`vocabulary`). Owns no table.
Nothing here imports Spark at module level: the DAG file reads `config` and `spark_conf` at parse time.
"""
