"""Log rules as data: `<source>_events.yaml` (message text → event_type and fields), `fields.yaml`."""
