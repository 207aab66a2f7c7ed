"""The quickstart sample: generated lakes, their map and their README (lakeFS's layout)."""

from kvlake.sample.files import COMMIT_MESSAGE, SampleFile, sample_files

__all__ = ["COMMIT_MESSAGE", "SampleFile", "sample_files"]
