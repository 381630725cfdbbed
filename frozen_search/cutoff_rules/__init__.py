"""Per-source cutoff rules, pure (no I/O, no clock): what counts as before the cutoff and what is never shown."""
