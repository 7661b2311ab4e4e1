// swift-tools-version:6.0
import PackageDescription

// The HUD and the event stream depend on argument parsing only: everything on the per-tick path
// is the C library and system calls. The daemon (its own target) adds what a server should not
// write by hand: swift-prometheus for the exposition, SwiftNIO for HTTP. (swift-service-lifecycle
// ran it once; its signal handling and Swift concurrency start libdispatch's worker pool, whose
// manager thread asks for a nice value a hardened service may not have: see DaemonRunner.)

// How perfhud is linked on Linux, for what stays resident (issue 22; docs/benchmarks.md, "Memory"):
// lld, whose relocations of the position-independent executable go packed in DT_RELR (glibc 2.36,
// Debian 12) — the loader read 1.3 MiB of .rela.dyn at every start — and no dynamic symbol table of
// perfhud's own symbols: the Swift toolchain's static-stdlib-args.lnk asks for --export-dynamic,
// which exported 14,500 symbols (1.3 MiB of .dynsym, .dynstr and .gnu.hash) that nothing looks up.
// And the code the loops run laid out together, then what start-up runs: the kernel maps the file
// 64 KiB around each page first touched, so scattered functions made megabytes resident (a tick of
// the daemon ran 0.8 MiB of functions and kept 3 MiB). Packaging/perfhud.order lists them, made by
// Benchmarks/symbol_order.sh; the Makefile's -function-sections lets the linker move each function
// (without it, each object file moves whole). Names no longer there are skipped.
let residentLinkFlags = [
    "-use-ld=lld",
    "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
    "-Xlinker", "--no-export-dynamic",
    "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Packaging/perfhud.order",
    "-Xlinker", "--no-warn-symbol-ordering",
]

// The tick's code (sampling, store, rows, recording) is in the core's targets. In a release build, no
// run-time exclusivity checks: they were ~2.5k of the idle tick's ~49k instructions
// (swift_beginAccess on each class property written); the compile-time checks stay, and debug
// builds (the unit tests) keep the run-time ones.
// And cross-module optimisation: the layers are modules (docs/development.md), and without it a
// call from one layer into another is a call — no inlining, a generic (RingBuffer, the table's
// accessors) run unspecialised through its metadata —, which made the idle tick 16 % dearer
// (53.6k instructions against 46.1k as one module; docs/benchmarks.md, "Layers as targets").
let coreSettings: [SwiftSetting] = [
    .unsafeFlags(["-enforce-exclusivity=unchecked", "-cross-module-optimization"], .when(configuration: .release)),
]

let package = Package(
    name: "perfhud",
    platforms: [.macOS(.v13)],  // Linux only in practice; Duration needs macOS 13 when type-checked there
    products: [
        .executable(name: "perfhud", targets: ["perfhud"]),
        .executable(name: "perfhud-demo", targets: ["perfhud-demo"]),
        // The client library programs link to report frames, actions and phases: no dependency.
        .library(name: "PerfHUDClient", targets: ["PerfHUDClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.60.0"),
    ],
    targets: [
        // libproc2 (procps-ng): discovery and metadata. Debian package libproc2-dev.
        .systemLibrary(
            name: "CProc2",
            pkgConfig: "libproc2",
            providers: [.apt(["libproc2-dev"])]
        ),
        // SQLite 3: the recordings (`--record FILE`). Debian package libsqlite3-dev.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // Static inline wrappers for what Swift cannot import: variadic ioctl/syscall.
        .target(name: "CSystemShims"),
        // The core, one target per layer, in the order the data flows: each imports only those
        // below it, so a use up the order does not compile (docs/development.md, "How it is built").
        // A name that crosses a layer is `package`; `public` is what the command line and the
        // client's tests use.
        // System calls, buffers, clocks, errors, text helpers: what every layer uses.
        .target(name: "PerfHUDSupport", dependencies: ["CSystemShims"], swiftSettings: coreSettings),
        // /proc and the control group: one Sample per tick.
        .target(name: "PerfHUDSampling", dependencies: ["PerfHUDSupport", "CProc2", "CSystemShims"], swiftSettings: coreSettings),
        // The event socket, its parser and aggregator, reducer logs, frames.
        .target(name: "PerfHUDEvents", dependencies: ["PerfHUDSupport", "PerfHUDSampling", "CSystemShims"], swiftSettings: coreSettings),
        // Ring buffers of the samples, the leak trend, phases.
        .target(name: "PerfHUDStore", dependencies: ["PerfHUDSupport", "PerfHUDSampling"], swiftSettings: coreSettings),
        // One tick (sample + store + events -> Tick), the table of figures, what a whole run adds up.
        .target(
            name: "PerfHUDPipeline",
            dependencies: ["PerfHUDSupport", "PerfHUDSampling", "PerfHUDEvents", "PerfHUDStore"],
            swiftSettings: coreSettings
        ),
        // The HUD's lines from a snapshot (pure).
        .target(
            name: "PerfHUDRender",
            dependencies: ["PerfHUDSupport", "PerfHUDSampling", "PerfHUDEvents", "PerfHUDStore", "PerfHUDPipeline"],
            swiftSettings: coreSettings
        ),
        // The screen, keys, the program's output on its area.
        .target(
            name: "PerfHUDTerminal",
            dependencies: ["PerfHUDSupport", "PerfHUDSampling", "PerfHUDEvents", "PerfHUDPipeline", "PerfHUDRender", "CSystemShims"],
            swiftSettings: coreSettings
        ),
        // The plain and JSON rows, the end summary.
        .target(
            name: "PerfHUDOutput",
            dependencies: [
                "PerfHUDSupport", "PerfHUDSampling", "PerfHUDEvents", "PerfHUDStore", "PerfHUDPipeline", "PerfHUDRender",
                "PerfHUDTerminal",
            ],
            swiftSettings: coreSettings
        ),
        // The SQLite recording, replay, reports.
        .target(
            name: "PerfHUDRecordings",
            dependencies: [
                "PerfHUDSupport", "PerfHUDSampling", "PerfHUDEvents", "PerfHUDStore", "PerfHUDPipeline", "PerfHUDOutput",
                "CSQLite",
            ],
            swiftSettings: coreSettings
        ),
        // `perfhud top`.
        .target(
            name: "PerfHUDTop",
            dependencies: ["PerfHUDSupport", "PerfHUDSampling", "PerfHUDPipeline", "PerfHUDRender", "PerfHUDTerminal", "CSystemShims"],
            swiftSettings: coreSettings
        ),
        // The loops: the session, the launched program, its events.
        .target(
            name: "PerfHUDRuntime",
            dependencies: [
                "PerfHUDSupport", "PerfHUDSampling", "PerfHUDEvents", "PerfHUDStore", "PerfHUDPipeline", "PerfHUDRender",
                "PerfHUDTerminal", "PerfHUDOutput", "PerfHUDRecordings", "CSystemShims",
            ],
            swiftSettings: coreSettings
        ),
        .target(
            name: "PerfHUDDaemon",
            dependencies: [
                "PerfHUDSupport", "PerfHUDSampling", "PerfHUDEvents", "PerfHUDStore", "PerfHUDPipeline",
                "PerfHUDOutput", "PerfHUDRecordings", "CSystemShims",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "perfhud",
            dependencies: [
                "PerfHUDSupport", "PerfHUDSampling", "PerfHUDEvents", "PerfHUDStore", "PerfHUDPipeline", "PerfHUDRender",
                "PerfHUDOutput", "PerfHUDRecordings", "PerfHUDTop", "PerfHUDRuntime", "PerfHUDDaemon",
                "PerfHUDClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            linkerSettings: [.unsafeFlags(residentLinkFlags, .when(platforms: [.linux]))]
        ),
        .target(name: "PerfHUDClient"),
        .executableTarget(name: "perfhud-demo", dependencies: ["PerfHUDClient"]),
        // Unit and in-process tests, one target per module. The client's tests send to the real
        // receiver of the core (no stand-in); the end-to-end tests (Tests/EndToEnd) run the binary.
        .testTarget(
            name: "PerfHUDCoreTests",
            dependencies: [
                "PerfHUDSupport", "PerfHUDSampling", "PerfHUDEvents", "PerfHUDStore", "PerfHUDPipeline", "PerfHUDRender",
                "PerfHUDTerminal", "PerfHUDOutput", "PerfHUDRecordings",
            ]
        ),
        .testTarget(
            name: "PerfHUDClientTests",
            dependencies: ["PerfHUDClient", "PerfHUDSupport", "PerfHUDEvents", "PerfHUDPipeline"]
        ),
        .testTarget(
            name: "PerfHUDDaemonTests",
            dependencies: ["PerfHUDDaemon", "PerfHUDSupport", "PerfHUDSampling", "PerfHUDEvents", "PerfHUDStore", "PerfHUDPipeline"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
