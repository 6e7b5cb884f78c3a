"""Starforge's in-container runner: started by the RayJob as `python runner.pex` in the
unpacked Capsule (Ray's working_dir), it checks the Capsule, prepares jobs/<id>/ on the
storage, and runs the NeMo-RL example script with the job's config and cluster shape."""
