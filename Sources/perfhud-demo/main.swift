// The bundled demo: a program with a visible life for the HUD to show. It burns CPU in bursts,
// allocates memory in phases and gives only part of it back, and prints a line now and then.
#if canImport(Glibc)
@preconcurrency import Glibc   // stdout and stderr: C globals, written by this one thread
#endif
import PerfHUDClient

// It takes no arguments; --help and --version answer, anything else is refused, before any CPU
// is burnt or memory taken. (Version.swift links to perfhud's: one version for both.)
for argument in CommandLine.arguments.dropFirst() {
    switch argument {
    case "-h", "--help":
        print("""
            perfhud-demo: the program `perfhud demo` runs under the HUD. It burns CPU in bursts, takes \
            memory in phases (120 MiB at its peak, part of it kept), prints a line now and then, and \
            reports frames, actions and phases to perfhud's event socket. It runs until stopped.

            USAGE: perfhud demo [<options>]   (under the HUD: see perfhud demo --help)
                   perfhud-demo               (alone: the same work, reported to nobody)

            OPTIONS:
              --version    Show the version.
              -h, --help   Show this help.
            """)
        exit(0)
    case "--version":
        print(perfhudVersion)
        exit(0)
    default:
        fputs("perfhud-demo: unexpected argument '\(argument)': it takes none (perfhud-demo --help)\n", stderr)
        exit(64)
    }
}

// Under perfhud (`perfhud demo`), PERFHUD_SOCKET is set and these reach the HUD; alone, no-ops.
let hud = PerfHUD.shared

/// The demo's actions, named as a reducer architecture would name them.
enum Editor {
    enum Action {
        case slider(Slider)
        case toolSelected(Int)
        case saveTapped
        enum Slider { case changed(Double) }
    }
}
let dispatch = hud.reducer { (state: inout Double, action: Editor.Action) in
    if case .slider(.changed(let value)) = action { state = value }
}
var editorState = 0.0

setvbuf(stdout, nil, _IOLBF, 0)

func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Busy for `seconds` at `share` of one core, in 10 ms slices.
func burn(seconds: Double, share: Double) {
    let end = now() + seconds
    var sink = 0.0
    while now() < end {
        let sliceEnd = now() + 0.01 * share
        while now() < sliceEnd { sink += sin(sink + 1) }
        usleep(useconds_t(10_000 * (1 - share)))
    }
    if sink == 42 { print("") }
}

/// Maps `mebibytes` of memory, resident at once (MAP_POPULATE). A system call rather than
/// malloc and stores: an optimiser may drop stores to memory that is freed unread, and then the
/// demo would show no memory at all.
struct Block {
    let address: UnsafeMutableRawPointer
    let size: Int
    init(mebibytes: Int) {
        size = mebibytes << 20
        address = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0)
    }
    func release() { munmap(address, size) }
}

/// A render loop on its own thread: a frame every 16.7 ms, and now and then a long one.
func startFrames() {
    var thread = pthread_t()
    pthread_create(&thread, nil, { _ in
        var frame = 0
        while true {
            frame += 1
            // Every 90th frame stalls (a janky frame); every 400th drops three frames' worth.
            usleep(frame % 400 == 0 ? 60_000 : frame % 90 == 0 ? 30_000 : 16_667)
            hud.frameTick()
        }
    }, nil)
}
startFrames()

let screens = ["Home", "Gallery", "Editor", "Export"]
var kept: [Block] = []
var round = 0
while true {
    round += 1
    for (index, screen) in screens.enumerated() {
        print("[demo] round \(round): entering \(screen)")
        hud.phase(screen)
        switch index {
        case 0:
            burn(seconds: 2, share: 0.1)
        case 1:
            // A heavy screen: 120 MiB of images, 20 MiB of which are never released.
            let images = Block(mebibytes: 100)
            let cache = Block(mebibytes: 20)
            kept.append(cache)
            burn(seconds: 1.5, share: 0.6)
            print("[demo] \(screen): loaded 120 MiB, leaving with 20 MiB still cached")
            images.release()
        case 2:
            print("[demo] \(screen): rendering (CPU burst), dragging the slider")
            dispatch(&editorState, .toolSelected(round % 3))
            // A slider drag: an action per pointer move, ~120 per second for 1.5 s.
            let dragStart = now()
            for step in 0..<180 {
                dispatch(&editorState, .slider(.changed(Double(step) / 180)))
                // Paced by the clock, not by the work: 120 per second whatever the load.
                let next = dragStart + Double(step + 1) / 120
                var sink = 0.0
                while now() < next { sink += sin(sink + 1) }
                if sink == 42 { print("") }
            }
            burn(seconds: 0.5, share: 1.0)
            dispatch(&editorState, .saveTapped)
        default:
            let buffer = Block(mebibytes: 60)
            burn(seconds: 1, share: 0.4)
            buffer.release()
            print("[demo] \(screen): export done, 60 MiB released")
        }
    }
    if kept.count > 8 { kept.forEach { $0.release() }; kept.removeAll(); print("[demo] caches dropped") }
}
