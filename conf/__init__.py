"""td3x's Hydra config groups (YAML only). This file makes ``conf/`` the package ``td3x.conf`` (pyproject.toml maps
it), so that a wheel ships the configs inside td3x and ``td3x-train`` finds them from any install."""
