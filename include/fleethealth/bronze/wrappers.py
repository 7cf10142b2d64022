"""The container runtime's wrapper of a bronze line, if any: CRI (`<RFC3339Nano> stdout|stderr F|P <line>`),
Docker's json-file (`{"log":"<line>\\n",...}`) or `kubectl logs --timestamps` (`<RFC3339Nano> <line>`).

bronze.files keeps each file's (`wrapper`), so silver unwraps only the sources of an hour that hold
wrapped files (silver.parsers.containers); a plain line costs a test of its first bytes.
"""
from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

_STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)"
CRI = rf"^({_STAMP}) (stdout|stderr) ([FP]) ?(.*)$"
KUBECTL = rf"^({_STAMP}) (.*)$"
DOCKER_PREFIX = '{"log":"'


def kind(record: Column) -> Column:
    """"docker", "cri" or "kubectl": the wrapper of a line (`record`); NULL for a plain line."""
    stamped = F.substring(record, 1, 1).between("0", "9") & (F.substring(record, 11, 1) == "T")
    return (F.when(F.substring(record, 1, len(DOCKER_PREFIX)) == DOCKER_PREFIX, F.lit("docker"))
            .when(stamped & record.rlike(CRI), F.lit("cri"))
            .when(stamped & record.rlike(KUBECTL), F.lit("kubectl")))
