import PerfHUDSupport
@testable import PerfHUDDaemon
import XCTest

/// A target as the operator writes it, on the command line or a line of --config.
final class TargetSpecTests: XCTestCase {
    func testALeadingWordAndEqualsNamesTheTarget() throws {
        XCTAssertEqual(try TargetSpec.parse(option: "--match", value: "web=gunicorn: master"),
                       TargetSpec(name: "web", selector: .match("gunicorn: master")))
        XCTAssertEqual(try TargetSpec.parse(option: "--pid", value: "db.main-1=1234"), TargetSpec(name: "db.main-1", selector: .pid(1234)))
        XCTAssertEqual(try TargetSpec.parse(option: "--match", value: "a b=c"), TargetSpec(name: nil, selector: .match("a b=c")),
                       "a space before = is part of the pattern")
        XCTAssertEqual(try TargetSpec.parse(option: "--unit", value: "web"), TargetSpec(name: nil, selector: .unit("web.service")))
        XCTAssertThrowsError(try TargetSpec.parse(option: "--pid", value: "x=0"))
        XCTAssertThrowsError(try TargetSpec.parse(option: "--units", value: "all=*.service"), "--units names targets after their units")
    }

    func testLinesAreSplitAsAShellWouldWithoutExpansions() throws {
        XCTAssertEqual(try ShellWords.split("--match web='gunicorn: master'  # the web tier"), ["--match", "web=gunicorn: master"])
        XCTAssertEqual(try ShellWords.split(#"--match "a \"b\" \$HOME" c\ d"#), ["--match", #"a "b" $HOME"#, "c d"])
        XCTAssertEqual(try ShellWords.split("   # only a comment"), [])
        XCTAssertEqual(try ShellWords.split("--units a#b"), ["--units", "a#b"], "# inside a word is not a comment")
        XCTAssertThrowsError(try ShellWords.split("--match 'unclosed"))
    }

    func testAFileWithAnErrorNamesItsLine() throws {
        let text = "# targets\n\n--unit web.service\n--pid=1234\n--match web='gunicorn: master'\n--units '*.service'\n"
        XCTAssertEqual(try TargetsFile.parse(text, path: "t.conf").count, 4)
        XCTAssertThrowsError(try TargetsFile.parse(text + "--pdi 5\n", path: "t.conf")) { error in
            XCTAssertEqual((error as? PerfHUDError)?.kind, .config)
            XCTAssertTrue((error as? PerfHUDError)?.message.hasPrefix("t.conf:7: ") == true, "\(error)")
        }
        XCTAssertThrowsError(try TargetsFile.parse("--pid 1 2\n", path: "t.conf"), "one target a line")
    }
}
