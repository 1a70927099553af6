"""Long jobs: API, the job record, the workflow's steps, and the Batch failure handler."""
