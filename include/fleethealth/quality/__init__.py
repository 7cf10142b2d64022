"""Quality: the GX suites runner and the gate of each layer (audit, publish, record, completeness).

In: a layer's computed tables of an hour. Out: the validation results (`suites`: Great Expectations
Core suites from `expectations/`), recorded in gold.quality_results and the Data Docs (`docs`: pages
that work offline, pruned with the tables' retention), and — only when no critical expectation
failed — the tables published (`gate`: write-audit-publish). Owns gold.quality_results and the cross-table audit gold.completeness (validated, never stored).
"""
