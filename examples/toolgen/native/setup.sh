#!/bin/sh
# Tools the native families run, installed the way CI would on a fresh
# Debian 12 machine. crates.io and Maven Central are not needed: the
# generator strips the crates' optional/dev dependencies and builds a
# jspecify annotation jar itself.
set -e
apt-get update
# c-gcc-make
apt-get install -y gcc make
# java-javac, java-junit: JDK 17, JUnit 5 console launcher and jars, and
# re2j (jsoup's optional regex engine, needed to compile its sources).
apt-get install -y openjdk-17-jdk-headless junit5 libopentest4j-java libapiguardian-java libre2j-java
# rust-cargo-test, rust-cargo-build: a Rust toolchain (rustup, stable).
if ! command -v cargo >/dev/null 2>&1; then
	apt-get install -y curl
	curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
fi
