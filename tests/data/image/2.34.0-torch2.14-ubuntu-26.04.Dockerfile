# A TorchNeuron container image: Neuron 2.34.0, PyTorch 2.14.0, ubuntu-26.04.
# Rendered by neuron-env VERSION from its support matrix.
#
# Build: docker build -t trainium-torch .
# Run:   docker run --device=/dev/neuron0 trainium-torch neuron-env preflight --level 0
#        (pass every /dev/neuron* the job uses; the Neuron driver, aws-neuronx-dkms, stays on
#        the host: this image holds the user space only)
# WARNING: Ubuntu 26.04 LTS: unconfirmed. The 2.34 support table could not be read: the 2.33 rules are carried forward.
# WARNING: 2.34.0: 2 pins unconfirmed — see 'neuron-env matrix show --release 2.34.0'
# WARNING: Neuron 2.34.0 does not confirm the versions of aws-neuronx-collectives, aws-neuronx-runtime-lib, aws-neuronx-tools: the image installs them unpinned (the newest in the repository).
FROM ubuntu:26.04

LABEL "org.opencontainers.image.title"="TorchNeuron: Neuron 2.34.0, PyTorch 2.14.0, ubuntu-26.04"
LABEL "org.opencontainers.image.description"="PyTorch 2.14.0 with torch-neuronx 2.14.3.1.* for AWS Trainium, Neuron 2.34.0 user space (the driver is the host's); rendered by neuron-env VERSION."
LABEL "org.opencontainers.image.base.name"="ubuntu:26.04"
LABEL "neuron-env.release"="2.34.0"
LABEL "neuron-env.os"="ubuntu-26.04"
LABEL "neuron-env.torch"="2.14.0"
LABEL "neuron-env.torch-neuronx"="2.14.3.1.*"
LABEL "neuron-env.pin.neuronx-cc"="==2.*"
LABEL "neuron-env.pin.nki"="==0.8.0"
LABEL "neuron-env.pin.torch"="==2.14.0"
LABEL "neuron-env.pin.torch-neuronx"="==2.14.3.1.*"
LABEL "neuron-env.apt.aws-neuronx-collectives"="unpinned"
LABEL "neuron-env.apt.aws-neuronx-runtime-lib"="unpinned"
LABEL "neuron-env.apt.aws-neuronx-tools"="unpinned"
LABEL "neuron-env.healthcheck"="neuron-env preflight --level 0 --release 2.34.0 --torch 2.14 --python /opt/venv/bin/python"

SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ARG DEBIAN_FRONTEND=noninteractive

# The Neuron apt repository and its key, then the release's user-space packages at its versions.
# The base packages follow the base image's own updates.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl gnupg python3 python3-venv \
    && install -d -m 0755 /etc/apt/keyrings \
    && curl -fsSL https://apt.repos.neuron.amazonaws.com/GPG-PUB-KEY-AMAZON-AWS-NEURON.PUB | gpg --dearmor -o /etc/apt/keyrings/neuron.gpg \
    && echo 'deb [signed-by=/etc/apt/keyrings/neuron.gpg] https://apt.repos.neuron.amazonaws.com resolute main' | tee /etc/apt/sources.list.d/neuron.list \
    && apt-get update \
    && apt-get install -y --no-install-recommends aws-neuronx-collectives aws-neuronx-runtime-lib aws-neuronx-tools \
    && rm -rf /var/lib/apt/lists/*

# EFA user space (libfabric, Open MPI) for multi-node jobs, its signature checked. --skip-kmod:
# the EFA kernel module is the host's. The installer runs from its own folder (hence the cd), and
# one RUN keeps the download out of the image's layers.
WORKDIR /tmp/efa
# hadolint ignore=DL3003
RUN curl -fsSL --retry 3 -o aws-efa-installer-latest.tar.gz https://efa-installer.amazonaws.com/aws-efa-installer-latest.tar.gz \
    && curl -fsSL --retry 3 -o aws-efa-installer-latest.tar.gz.sig https://efa-installer.amazonaws.com/aws-efa-installer-latest.tar.gz.sig \
    && curl -fsSL --retry 3 -o aws-efa-installer.key https://efa-installer.amazonaws.com/aws-efa-installer.key \
    && GNUPGHOME="$(mktemp -d)" \
    && export GNUPGHOME \
    && gpg --batch --import aws-efa-installer.key \
    && gpg --batch --verify aws-efa-installer-latest.tar.gz.sig aws-efa-installer-latest.tar.gz \
    && tar -xzf aws-efa-installer-latest.tar.gz \
    && cd aws-efa-installer \
    && ./efa_installer.sh --yes --skip-kmod --skip-limit-conf --no-verify \
    && cd / \
    && rm -rf /tmp/efa "$GNUPGHOME"
WORKDIR /

# neuron-env, checked before it is installed, then the Python environment it builds, with any
# packages of yours: the same pins and indexes as 'neuron-env install' on a host (each package
# from its own index only; a Neuron name any package pulls in from elsewhere fails the build).
RUN python3 -m venv /opt/neuron-env/tool \
    && install -d -m 0700 /tmp/neuron-env \
    && curl -fsSL --retry 3 --proto =https,http -o /tmp/neuron-env/neuron_env-0.1.0-py3-none-any.whl https://artifacts.example.com/neuron-env/neuron_env-0.1.0-py3-none-any.whl \
    && printf '%s  %s\n' 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef /tmp/neuron-env/neuron_env-0.1.0-py3-none-any.whl | sha256sum --check --strict - \
    && /opt/neuron-env/tool/bin/pip install --no-cache-dir /tmp/neuron-env/neuron_env-0.1.0-py3-none-any.whl \
    && rm -rf /tmp/neuron-env \
    && ln -s /opt/neuron-env/tool/bin/neuron-env /usr/local/bin/neuron-env \
    && neuron-env install --torch 2.14 --release 2.34.0 --venv /opt/venv --python /usr/bin/python3 --yes

# The environment first on PATH, then the Neuron tools and EFA; the runtime's libraries. No
# ${LD_LIBRARY_PATH} is appended: an empty entry would put the working directory on the path.
# container=oci tells neuron-env (and systemd) it runs in a container where nothing else can
# (containerd with cgroup v2): the driver is then expected on the host, not in the image.
ENV container="oci" \
    VIRTUAL_ENV="/opt/venv" \
    PATH="/opt/venv/bin:/opt/aws/neuron/bin:/opt/amazon/openmpi/bin:/opt/amazon/efa/bin:${PATH}" \
    LD_LIBRARY_PATH="/opt/aws/neuron/lib:/opt/amazon/efa/lib:/opt/amazon/efa/lib64:/opt/amazon/openmpi/lib64"

# The container's own preflight: the host's devices passed in, the environment as built.
HEALTHCHECK --interval=10m --timeout=2m --start-period=1m CMD ["neuron-env", "preflight", "--level", "0", "--release", "2.34.0", "--torch", "2.14", "--python", "/opt/venv/bin/python"]
