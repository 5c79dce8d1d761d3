"""orchestra's doors to ARE beyond `orchestra.are_adapter`: each module here imports ARE lazily."""
