"""``python -m neuron_env`` runs the same CLI as the ``neuron-env`` console script."""

from neuron_env.cli import main

if __name__ == "__main__":
    main()
