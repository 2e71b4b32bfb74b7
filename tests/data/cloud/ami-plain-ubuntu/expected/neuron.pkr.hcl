# Packer (HCL2, amazon-ebs): a Neuron-ready AMI for Neuron 2.33.1, PyTorch 2.14.0, ubuntu-26.04.
# Rendered by neuron-env VERSION from its support matrix.
# Build it:  packer init . && packer build .    (region: -var region=... or $AWS_REGION)
#
# The build starts from Canonical's Ubuntu 26.04 AMI (latest),
# runs provision.sh (the shared bootstrap.sh in image-build mode: Neuron apt packages pinned to
# the release, kernel headers, EFA, the Python environment via 'neuron-env install')
# and ends with 'neuron-env doctor', which fails the build when the image is not healthy.
# WARNING: The source AMI's SSM parameter /aws/service/canonical/ubuntu/server/26.04/stable/current/amd64/hvm/ebs-gp3/ami-id is unconfirmed: Canonical's public parameter path is not in neuron-env's references. Check it with 'aws ssm get-parameter --name /aws/service/canonical/ubuntu/server/26.04/stable/current/amd64/hvm/ebs-gp3/ami-id' before building.

packer {
  # required_plugins (and 'packer init') need Packer 1.7 or later.
  required_version = ">= 1.7.0"
  required_plugins {
    amazon = {
      source  = "github.com/hashicorp/amazon"
      version = ">= 1.3.0"
    }
  }
}

variable "region" {
  type        = string
  default     = env("AWS_REGION")
  description = "Region to build in (default: $AWS_REGION)."
}

variable "instance_type" {
  type        = string
  default     = "trn2.48xlarge"
  description = "Builder instance type: a Trainium instance, because the build ends with neuron-env doctor."
}

variable "subnet_id" {
  type        = string
  default     = ""
  description = "Subnet for the builder (default: the default VPC)."
}

variable "volume_size" {
  type        = number
  default     = 512
  description = "Root volume in GiB (Neuron needs at least 512 GiB on Trainium)."
}

variable "ami_name_prefix" {
  type    = string
  default = "neuron-env-2.33.1-torch2.14.0-ubuntu-26.04"
}

data "amazon-parameterstore" "source_ami" {
  name   = "/aws/service/canonical/ubuntu/server/26.04/stable/current/amd64/hvm/ebs-gp3/ami-id"
  region = var.region
}

locals {
  build_time = formatdate("YYYYMMDDhhmmss", timestamp())
}

source "amazon-ebs" "neuron" {
  region          = var.region
  source_ami      = data.amazon-parameterstore.source_ami.value
  instance_type   = var.instance_type
  subnet_id       = var.subnet_id == "" ? null : var.subnet_id
  ssh_username    = "ubuntu"
  ami_name        = "${var.ami_name_prefix}-${local.build_time}"
  ami_description = "Neuron-ready AMI built by neuron-env: Neuron 2.33.1, PyTorch 2.14.0, ubuntu-26.04"
  imds_support    = "v2.0"

  metadata_options {
    http_endpoint               = "enabled"
    http_tokens                 = "required"
    http_put_response_hop_limit = 1
  }

  launch_block_device_mappings {
    device_name           = "/dev/sda1"
    volume_size           = var.volume_size
    volume_type           = "gp3"
    encrypted             = true
    delete_on_termination = true
  }

  tags = {
    "neuron-env:release" = "2.33.1"
    "neuron-env:torch"   = "2.14.0"
    "neuron-env:os"      = "ubuntu-26.04"
  }
}

build {
  sources = ["source.amazon-ebs.neuron"]

  provisioner "file" {
    source      = "${path.root}/bootstrap.sh"
    destination = "/tmp/neuron-env-bootstrap"
  }

  provisioner "shell" {
    script          = "${path.root}/provision.sh"
    execute_command = "chmod +x {{ .Path }}; sudo -E {{ .Path }}"
  }
}
