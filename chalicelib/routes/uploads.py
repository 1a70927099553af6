"""POST /v1/uploads: a presigned POST for one object under the caller's incoming/ prefix."""
from __future__ import annotations

from .. import api
from ..operation import AUTHENTICATED, IDEMPOTENCY_KEY, Operation, blueprint

OPERATIONS = (
    Operation("createUpload", "POST", "/v1/uploads", api.create_upload, 201, "UploadForm",
              "A presigned POST (SigV4, short-lived) for one object under the caller's incoming/ prefix",
              (400, *AUTHENTICATED, 409, 422), body="UploadRequest", parameters=(IDEMPOTENCY_KEY,)),
)
routes = blueprint(__name__, OPERATIONS)
