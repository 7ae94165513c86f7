# Installing Debian's packages as root or through passwordless sudo; sourced by the
# set-up scripts (tools/install_system_packages.sh, tools/setup_venv.sh).

# can_install: true as root or with passwordless sudo, and sets `sudo` for apt_install.
can_install() {
  if [ "$(id -u)" = 0 ]; then
    sudo=()
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    return 1
  fi
}

# apt_install PACKAGE...: install from Debian's packages (after can_install).
apt_install() {
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "$@" >/dev/null
}
