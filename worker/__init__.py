"""The AWS Batch GPU worker: runs a job's prompts on a self-hosted model and answers the workflow."""
