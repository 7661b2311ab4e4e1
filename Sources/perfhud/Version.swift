/// perfhud's version: the one place it is written. `perfhud --version` prints it, and the Debian
/// package takes its version from Packaging/debian/changelog, whose top entry must say the same:
/// `make package` stops when they differ, and Tests/EndToEnd/test_package.py checks the built package.
/// Sources/perfhud-demo/Version.swift links here: `perfhud-demo --version` says the same.
let perfhudVersion = "0.1.0"
