# Terraform (AWS provider): a launch template for Neuron 2.33.1, PyTorch 2.14.0, trn2.3xlarge, ubuntu-26.04.
# Rendered by neuron-env VERSION from its support matrix.

variable "launch_template_name" {
  description = "Name of the launch template"
  type        = string
  default     = "neuron-env-trn2-3xlarge"
}

resource "aws_launch_template" "neuron" {
  name          = var.launch_template_name
  description   = "Neuron 2.33.1, PyTorch 2.14.0, trn2.3xlarge, ubuntu-26.04"
  image_id      = "ami-0123456789abcdef0"
  instance_type = "trn2.3xlarge"

  iam_instance_profile {
    arn = "arn:aws:iam::123456789012:instance-profile/neuron-host"
  }

  metadata_options {
    http_endpoint               = "enabled"
    http_tokens                 = "required"
    http_put_response_hop_limit = 1
  }

  network_interfaces {
    network_card_index    = 0
    device_index          = 0
    interface_type        = "interface"
    delete_on_termination = true
    subnet_id             = "subnet-0123456789abcdef0"
  }

  network_interfaces {
    network_card_index    = 0
    device_index          = 1
    interface_type        = "efa-only"
    delete_on_termination = true
    subnet_id             = "subnet-0123456789abcdef0"
  }

  block_device_mappings {
    device_name = "/dev/sda1"
    ebs {
      volume_size           = 512
      volume_type           = "gp3"
      encrypted             = true
      delete_on_termination = true
    }
  }

  capacity_reservation_specification {
    capacity_reservation_target {
      capacity_reservation_id = "cr-0123456789abcdef0"
    }
  }

  tag_specifications {
    resource_type = "instance"
    tags = {
      "neuron-env:status"  = "pending"
      "neuron-env:release" = "2.33.1"
      "neuron-env:torch"   = "2.14.0"
    }
  }

  user_data = base64encode(<<NEURON_ENV_USER_DATA
#!/bin/bash
# Boot-time setup and validation of a Trainium host, rendered by neuron-env VERSION
# for Neuron 2.33.1, PyTorch 2.14.0, trn2.3xlarge, ubuntu-26.04.
#
# cloud-init runs this once per instance. It installs neuron-env's bootstrap script and runs it:
# the script installs what the image lacks (neuron-env itself, the Neuron packages, EFA, the
# Python environment), then validates the host with 'neuron-env doctor'.
#   log:    /var/log/neuron-env/bootstrap.log
#   report: /var/log/neuron-env/doctor.json
#   marker: /var/lib/neuron-env/status (ok, warn, fail or error); /var/lib/neuron-env/ready
#           exists only when the host passed
#   tag:    neuron-env:status on this instance, when its instance profile may tag it
set -euo pipefail
umask 022
install -d -m 0755 /usr/local/sbin
cat > /usr/local/sbin/neuron-env-bootstrap <<'NEURON_ENV_BOOTSTRAP'
[scripts/bootstrap.sh, verbatim: 364 lines, checked by the test]
NEURON_ENV_BOOTSTRAP
chmod 0755 /usr/local/sbin/neuron-env-bootstrap
# shellcheck disable=SC2016  # the values are literal: nothing in them may expand
exec /usr/local/sbin/neuron-env-bootstrap --release 2.33.1 --torch 2.14 --neuron-env-source ami --venv /opt/neuron-env/venv --system auto --efa auto --python-env auto --level 1
NEURON_ENV_USER_DATA
  )
}

output "launch_template_id" {
  value = aws_launch_template.neuron.id
}

output "launch_template_latest_version" {
  value = aws_launch_template.neuron.latest_version
}
