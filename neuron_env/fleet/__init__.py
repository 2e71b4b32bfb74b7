"""Fleet validation: collect facts from many hosts (AWS Systems Manager) and judge them offline."""
