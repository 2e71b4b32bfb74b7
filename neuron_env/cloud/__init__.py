"""EC2 launch templates, AMI recipes and boot-time validation, rendered from the matrix.

Pure functions turn a release and the user's options into a
:class:`~neuron_env.cloud.spec.LaunchSpec`
(image, EFA layout, IMDSv2, storage, capacity, user data), and renderers lay it out as
LaunchTemplateData JSON, CloudFormation, Terraform or a Packer recipe. The only AWS calls
(:mod:`neuron_env.cloud.ssm`, :mod:`neuron_env.cloud.launch_templates`) take boto3 clients as
parameters; the CLI creates them.
"""
