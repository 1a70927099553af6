"""What the deploy artefact and the local stack both read about a stage (neither imports the other)."""
