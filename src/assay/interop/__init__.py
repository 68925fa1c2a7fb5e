"""Readers of other tools' files (AgentV v4/v5 eval files, promptfoo configs).

They sit beside `assay.config` (each may import the other): the suite loader hands an AgentV
document to `interop.agentv` to be rewritten, and the readers use the loader's located YAML.
Keeping them out of `config/` keeps the native format's package about the native format.
"""
