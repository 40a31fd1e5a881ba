namespace kozmo::k8s {}
