"""How code starts: config, the Spark session and its conf, class-data-sharing options, safe text.

In: the environment (every `FLEETHEALTH_*` setting is read through `config`, with its type, default
and doc). Out: a Delta-enabled SparkSession (`session`), the settings every Spark application gets
(`spark_conf`, also given to the DAG's SparkSubmitOperators), small DataFrame helpers of the jobs
(`frames`). Beside them, what every floor shares: files and settings validated into one-line mistakes
(`validation`, pydantic models), the incident severities (`vocabulary`) and text safe to print
(`text`). The ground floor: imports no other package. Owns no table.
Nothing here imports Spark at module level: the DAG file reads `config` and `spark_conf` at parse time.
"""
