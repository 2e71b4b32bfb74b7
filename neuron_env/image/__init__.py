"""The image command: a Dockerfile for Trainium, rendered from the support matrix."""
