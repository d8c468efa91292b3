"""The pipeline layer: method and artifact declarations, their registry, the generic stage
runner and the generator of dvc.yaml."""
