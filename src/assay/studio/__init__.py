"""The studio: HTML pages over the public `/api`, served by `assay serve`.

Pages are server-rendered shells; `static/studio.js` fills them from the JSON API with the
views the HTML report uses (`assay/report/assets`), so the studio shows nothing the API does
not.
"""

from assay.studio._pages import CONTENT_SECURITY_POLICY, router

__all__ = ["CONTENT_SECURITY_POLICY", "router"]
