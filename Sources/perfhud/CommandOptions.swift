import ArgumentParser
import PerfHUDSupport

/// The options a command takes, as ArgumentParser describes it to tools: the JSON of
/// `--experimental-dump-help` (ToolInfoV0, versioned by its `serializationVersion`), which
/// SwiftPM's manual plug-in reads too. ArgumentParser has no list of a command's options in its
/// API, and its help is a page for people. Read by hand, as the rest of perfhud's JSON, for lack
/// of a JSON library that is not Foundation's (megabytes in a static binary); the text is
/// ArgumentParser's own, so a document that does not read is a list without names, not a fault.
enum CommandOptions {
    /// Every `--name` `command` takes, `--help` and `--version` included.
    static func longNames(of command: ParsableCommand.Type) -> Set<String> {
        var names: Set<String> = ["--help", "--version"]
        guard case .object(let root)? = JSONValue.parse(command._dumpHelp()),
              case .object(let description)? = root["command"], case .array(let arguments)? = description["arguments"] else { return names }
        for case .object(let argument) in arguments {
            guard case .string(let kind)? = argument["kind"], kind != "positional", case .array(let given)? = argument["names"] else { continue }
            for case .object(let name) in given {
                if case .string("long")? = name["kind"], case .string(let long)? = name["name"] { names.insert("--" + long) }
            }
        }
        return names
    }
}
