"""The oracle: replaying a scenario's own oracle actions (`replay`) and breaking them on purpose
(`perturbations`: the judge must then reject the trajectory)."""
