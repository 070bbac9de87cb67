# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_capabilities_global_optspecs
    string join \n config= h/help V/version
end

function __fish_capabilities_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_capabilities_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_capabilities_using_subcommand
    set -l cmd (__fish_capabilities_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c capabilities -n "__fish_capabilities_needs_command" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_needs_command" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "init" -d 'Write a commented starter config'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "source" -d 'Add, list, test and remove sources (MCP servers)'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "search" -d 'Find tools by what you want to do; prints one-line TypeScript signatures, best match first'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "describe" -d 'Print exact TypeScript declarations of tools, namespaces or named types'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c capabilities -n "__fish_capabilities_using_subcommand init" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand init" -l force -d 'Overwrite an existing config'
complete -c capabilities -n "__fish_capabilities_using_subcommand init" -l print -d 'Print the starter config instead of writing it'
complete -c capabilities -n "__fish_capabilities_using_subcommand init" -l reference -d 'Print the full commented reference of every key'
complete -c capabilities -n "__fish_capabilities_using_subcommand init" -s h -l help -d 'Print help'
complete -c capabilities -n "__fish_capabilities_using_subcommand init" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test help" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test help" -s h -l help -d 'Print help'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test help" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test help" -f -a "add" -d 'Add a source: a command started over stdio (after `--`), or a Streamable HTTP `--url`'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test help" -f -a "list" -d 'Connect to every source and list them with their live status and tool counts'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test help" -f -a "remove" -d 'Remove a source from the config'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test help" -f -a "test" -d 'Connect to one source, list its tools, and report what happened'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from add" -l url -d 'Streamable HTTP endpoint of the server' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from add" -l header -d 'A header for an HTTP source, as NAME=VALUE (repeatable)' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from add" -l env -d 'An environment variable for a stdio source, as KEY=VALUE (repeatable)' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from add" -l cwd -d 'Working directory of a stdio source' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from add" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from add" -l no-test -d 'Write the source without connecting to it first'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from add" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from list" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from list" -l json -d 'Print JSON instead of a table'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from remove" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from remove" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from test" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from test" -s h -l help -d 'Print help'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from test" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from help" -f -a "add" -d 'Add a source: a command started over stdio (after `--`), or a Streamable HTTP `--url`'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from help" -f -a "list" -d 'Connect to every source and list them with their live status and tool counts'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Remove a source from the config'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from help" -f -a "test" -d 'Connect to one source, list its tools, and report what happened'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c capabilities -n "__fish_capabilities_using_subcommand search" -s n -l namespace -d 'Search (or list) only this source' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand search" -s l -l limit -d 'Show at most this many tools' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand search" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand search" -l refresh -d 'Re-list every source instead of using cached listings'
complete -c capabilities -n "__fish_capabilities_using_subcommand search" -s h -l help -d 'Print help'
complete -c capabilities -n "__fish_capabilities_using_subcommand search" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand describe" -l budget -d 'Token budget of the output (o200k_base tokens)' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand describe" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand describe" -l refresh -d 'Re-list every source instead of using cached listings'
complete -c capabilities -n "__fish_capabilities_using_subcommand describe" -s h -l help -d 'Print help'
complete -c capabilities -n "__fish_capabilities_using_subcommand describe" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand completions" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand completions" -s h -l help -d 'Print help'
complete -c capabilities -n "__fish_capabilities_using_subcommand completions" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe completions help" -f -a "init" -d 'Write a commented starter config'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe completions help" -f -a "source" -d 'Add, list, test and remove sources (MCP servers)'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe completions help" -f -a "search" -d 'Find tools by what you want to do; prints one-line TypeScript signatures, best match first'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe completions help" -f -a "describe" -d 'Print exact TypeScript declarations of tools, namespaces or named types'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe completions help" -f -a "completions" -d 'Print a shell completion script'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from source" -f -a "add" -d 'Add a source: a command started over stdio (after `--`), or a Streamable HTTP `--url`'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from source" -f -a "list" -d 'Connect to every source and list them with their live status and tool counts'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from source" -f -a "remove" -d 'Remove a source from the config'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from source" -f -a "test" -d 'Connect to one source, list its tools, and report what happened'
