"""Image settings every publisher shares (camera_node, the sim bridges, image_republish_node)."""

#: what `jpeg_quality` means everywhere: OpenCV's IMWRITE_JPEG_QUALITY
JPEG_QUALITY_RANGE = (1, 100)
DEFAULT_JPEG_QUALITY = 90
