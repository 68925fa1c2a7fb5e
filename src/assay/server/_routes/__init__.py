"""One router per resource of the API, all under `/api`."""
