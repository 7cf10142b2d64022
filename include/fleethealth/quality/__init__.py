"""Quality: the GX suites runner and the gate every layer's job ends in (audit, publish, record).

In: a layer's computed tables of an hour. Out: the validation results (`suites`: Great Expectations
Core suites from `expectations/`, run in the process's GX `context`), recorded in gold.quality_results
and the Data Docs (`docs`: pages that work offline, pruned with the tables' retention), and — only when no critical expectation
failed — the tables published (`gate`: write-audit-publish). Owns gold.quality_results. Knows no
layer: a layer gives its tables, its audits (frames across them, never stored) and its value sets.
"""
