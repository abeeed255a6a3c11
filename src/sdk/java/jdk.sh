# Sourced by the provision scripts of participants in Java (participants/_template-java shows
# how): `need_javac NAME` makes sure a JDK 17+ compiler is on PATH, installing Debian's
# openjdk-17-jdk-headless when run as root, or stops with one line naming NAME and the fix.
need_javac() {
  command -v javac >/dev/null 2>&1 && return 0
  [ "$(id -u)" = 0 ] || { echo "$1: javac (a JDK 17+) is missing; run this as root to install openjdk-17-jdk-headless" >&2; exit 1; }
  echo "$1: apt-get install openjdk-17-jdk-headless"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends openjdk-17-jdk-headless >/dev/null
}
