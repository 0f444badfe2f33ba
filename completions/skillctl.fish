# fish completion for skillctl(1): verbs, options, run ids (skillctl list --quiet) and skill names
# (skillctl skill list --quiet: the user's skill folders and the service's installed skills).
# Installed to fish's vendor_completions.d.

set -l verbs run exec session env list status logs result artifacts cancel wait rm runs mcp skill
set -l skill_verbs lint show package list install remove init tools
set -l id_verbs status logs result artifacts cancel wait rm

function __skillctl_run_ids
    skillctl --no-ask-password list --quiet 2>/dev/null
end
function __skillctl_skill_names
    skillctl --no-ask-password skill list --quiet 2>/dev/null
end
# True when the skill subcommand is $argv[1] (or, without argument, none is given yet).
function __skillctl_skill_sub
    set -l words (commandline -opc)
    set -l i (contains -i -- skill $words); or return 1
    set -l rest $words[(math $i + 1)..-1]
    set -l sub
    for w in $rest
        string match -q -- '-*' $w; and continue
        set sub $w
        break
    end
    if test (count $argv) -eq 0
        test -z "$sub"
    else
        test "$sub" = "$argv[1]"
    end
end

complete -c skillctl -f
# Global options and verbs.
complete -c skillctl -n "not __fish_seen_subcommand_from $verbs" -s h -l help -d 'Show help'
complete -c skillctl -n "not __fish_seen_subcommand_from $verbs" -l version -d 'Show the version'
complete -c skillctl -n "not __fish_seen_subcommand_from $verbs" -s v -l verbose -d 'Log debug messages'
complete -c skillctl -n "not __fish_seen_subcommand_from $verbs" -s H -l host -x -a '(__fish_print_hostnames)' -d 'Use the skilld of HOST over SSH'
complete -c skillctl -n "not __fish_seen_subcommand_from $verbs" -l no-ask-password -d 'Do not ask for a password'
complete -c skillctl -n "not __fish_seen_subcommand_from $verbs" -a run -d 'Run a skill in a sandbox'
complete -c skillctl -n "not __fish_seen_subcommand_from $verbs" -a exec -d "Run a command in a skill's sandbox"
complete -c skillctl -n "not __fish_seen_subcommand_from $verbs" -a session -d 'Sessions: /work kept between runs'
complete -c skillctl -n "not __fish_seen_subcommand_from $verbs" -a mcp -d 'Serve skills to AI agents over MCP'
complete -c skillctl -n "not __fish_seen_subcommand_from $verbs" -a env -d "Build and manage skills' environments"
complete -c skillctl -n "not __fish_seen_subcommand_from $verbs" -a list -d 'List your runs'
complete -c skillctl -n "not __fish_seen_subcommand_from $verbs" -a status -d 'Show state and usage of runs'
complete -c skillctl -n "not __fish_seen_subcommand_from $verbs" -a logs -d "Write a run's stored output"
complete -c skillctl -n "not __fish_seen_subcommand_from $verbs" -a result -d 'Show how a run ended'
complete -c skillctl -n "not __fish_seen_subcommand_from $verbs" -a artifacts -d 'List or fetch the files a run left'
complete -c skillctl -n "not __fish_seen_subcommand_from $verbs" -a cancel -d 'Stop queued or running runs'
complete -c skillctl -n "not __fish_seen_subcommand_from $verbs" -a wait -d 'Wait for a run to end'
complete -c skillctl -n "not __fish_seen_subcommand_from $verbs" -a rm -d 'Delete ended runs'
complete -c skillctl -n "not __fish_seen_subcommand_from $verbs" -a runs -d 'Prune the output folders of runs'
complete -c skillctl -n "not __fish_seen_subcommand_from $verbs" -a skill -d 'Lint, show, package, list, install, remove or create skills'

# run
complete -c skillctl -n '__fish_seen_subcommand_from run exec' -s h -l help -d 'Show help'
complete -c skillctl -n '__fish_seen_subcommand_from run' -l script -x -d 'Script to run'
complete -c skillctl -n '__fish_seen_subcommand_from run exec' -l input -x -d 'Input JSON'
complete -c skillctl -n '__fish_seen_subcommand_from run exec' -l input-file -r -F -d 'Read the input JSON from FILE'
complete -c skillctl -n '__fish_seen_subcommand_from run exec' -l file -r -F -d 'Copy PATH in as NAME (NAME=PATH)'
complete -c skillctl -n '__fish_seen_subcommand_from run exec' -l output-dir -x -a '(__fish_complete_directories)' -d 'Where artifacts and result.json go'
complete -c skillctl -n '__fish_seen_subcommand_from run exec' -l timeout -x -d 'Wall clock limit'
complete -c skillctl -n '__fish_seen_subcommand_from run exec' -l memory -x -d 'Memory limit (K, M, G, T)'
complete -c skillctl -n '__fish_seen_subcommand_from run exec' -l cpu -x -d 'CPU limit in percent'
complete -c skillctl -n '__fish_seen_subcommand_from run exec' -l tasks -x -d 'Process and thread limit'
complete -c skillctl -n '__fish_seen_subcommand_from run exec' -l env -x -d 'Set a variable (NAME=VALUE)'
complete -c skillctl -n '__fish_seen_subcommand_from run exec' -l network -d "Share the host's network"
complete -c skillctl -n '__fish_seen_subcommand_from run exec' -l json -d 'Print only the result JSON'
complete -c skillctl -n '__fish_seen_subcommand_from run exec' -s q -l quiet -d 'No summary line'
complete -c skillctl -n '__fish_seen_subcommand_from run exec' -l local -d 'Run in this process'
complete -c skillctl -n '__fish_seen_subcommand_from run exec' -l system -d 'Require the skilld service'
complete -c skillctl -n '__fish_seen_subcommand_from run exec' -l session -x -d 'Run in a session'
complete -c skillctl -n '__fish_seen_subcommand_from exec' -l cwd -x -a '/work /skill' -d 'Working directory'
complete -c skillctl -n '__fish_seen_subcommand_from run exec' -a '(__skillctl_skill_names)' -d 'Skill'
complete -c skillctl -n '__fish_seen_subcommand_from run exec' -a '(__fish_complete_directories) (__fish_complete_suffix .skill)'

# session and mcp
complete -c skillctl -n "__fish_seen_subcommand_from session; and not __fish_seen_subcommand_from create list show rm" -a 'create list show rm' -d 'Session command'
complete -c skillctl -n '__fish_seen_subcommand_from session' -l ttl -x -d 'Idle time until it expires'
complete -c skillctl -n '__fish_seen_subcommand_from session' -l quota -x -d 'The most its /work holds'
complete -c skillctl -n '__fish_seen_subcommand_from session' -l json -d 'Print JSON'
complete -c skillctl -n '__fish_seen_subcommand_from session mcp' -l local -d "skillctl's own"
complete -c skillctl -n '__fish_seen_subcommand_from session mcp' -l system -d 'The skilld service'
complete -c skillctl -n '__fish_seen_subcommand_from create' -a '(__skillctl_skill_names)' -d 'Skill'
complete -c skillctl -n '__fish_seen_subcommand_from mcp' -l skills-dir -x -a '(__fish_complete_directories)' -d 'Offer the skills in DIR'

# Verbs on runs.
complete -c skillctl -n '__fish_seen_subcommand_from list' -l all -d "Everyone's runs"
complete -c skillctl -n "__fish_seen_subcommand_from list; and not __fish_seen_subcommand_from skill session env" -s n -l lines -x -a 'all 100 1000' -d 'The newest N runs (all: every run)'
complete -c skillctl -n "__fish_seen_subcommand_from list; and not __fish_seen_subcommand_from skill" -s q -l quiet -d 'Ids only'
complete -c skillctl -n "__fish_seen_subcommand_from list status result wait artifacts" -l json -d 'Print JSON'
complete -c skillctl -n '__fish_seen_subcommand_from logs' -s f -l follow -d 'Follow'
complete -c skillctl -n '__fish_seen_subcommand_from logs' -l stream -x -a 'stdout stderr' -d 'Which stream'
complete -c skillctl -n '__fish_seen_subcommand_from artifacts' -l get -x -d 'Fetch PATH'
complete -c skillctl -n '__fish_seen_subcommand_from artifacts' -s o -l output -x -a '(__fish_complete_directories)' -d 'Folder to write to'
complete -c skillctl -n "__fish_seen_subcommand_from $id_verbs" -a '(__skillctl_run_ids)' -d 'Run'

# skill
complete -c skillctl -n '__skillctl_skill_sub' -a lint -d 'Validate a skill'
complete -c skillctl -n '__skillctl_skill_sub' -a show -d "Show a skill's metadata"
complete -c skillctl -n '__skillctl_skill_sub' -a package -d 'Build a .skill archive'
complete -c skillctl -n '__skillctl_skill_sub' -a list -d 'List the skills run NAME finds'
complete -c skillctl -n '__skillctl_skill_sub' -a install -d 'Install a skill on the host'
complete -c skillctl -n '__skillctl_skill_sub' -a remove -d 'Remove installed skills'
complete -c skillctl -n '__skillctl_skill_sub' -a init -d 'Create a new skill folder'
complete -c skillctl -n '__skillctl_skill_sub lint' -l strict -d 'Warnings are errors'
complete -c skillctl -n '__skillctl_skill_sub lint; or __skillctl_skill_sub show; or __skillctl_skill_sub list' -l json -d 'Print JSON'
complete -c skillctl -n '__skillctl_skill_sub list' -s q -l quiet -d 'Names only'
complete -c skillctl -n '__skillctl_skill_sub lint; or __skillctl_skill_sub show; or __skillctl_skill_sub install' -a '(__fish_complete_directories) (__fish_complete_suffix .skill)'
complete -c skillctl -n '__skillctl_skill_sub package' -a '(__fish_complete_directories)'
complete -c skillctl -n '__skillctl_skill_sub package' -s o -l output -r -F -d 'Archive to write'
complete -c skillctl -n '__skillctl_skill_sub install' -l replace -d 'Replace one of that name'
complete -c skillctl -n '__skillctl_skill_sub remove' -a '(__skillctl_skill_names)' -d 'Skill'
complete -c skillctl -n '__skillctl_skill_sub init' -l lang -x -a 'py js sh' -d 'Script language'
complete -c skillctl -n '__skillctl_skill_sub' -a tools -d 'Print tool definitions for model APIs'
complete -c skillctl -n '__skillctl_skill_sub tools' -l format -x -a 'openai openai-responses anthropic mcp' -d 'Format'
complete -c skillctl -n '__skillctl_skill_sub tools' -a '(__fish_complete_directories) (__fish_complete_suffix .skill)'

# runs prune
complete -c skillctl -n '__fish_seen_subcommand_from runs; and not __fish_seen_subcommand_from prune' -a prune -d 'Remove old run folders from ./skill-out'
complete -c skillctl -n '__fish_seen_subcommand_from prune' -l older-than -x -d 'Age of the runs to remove'
complete -c skillctl -n '__fish_seen_subcommand_from prune' -l keep -x -d 'Keep the newest N'
complete -c skillctl -n '__fish_seen_subcommand_from prune' -l dir -x -a '(__fish_complete_directories)' -d 'The output folder'
complete -c skillctl -n '__fish_seen_subcommand_from prune' -l dry-run -d 'Remove nothing'

# env
complete -c skillctl -n "__fish_seen_subcommand_from env; and not __fish_seen_subcommand_from build list show rm gc" -a 'build list show rm gc' -d 'Environment command'
complete -c skillctl -n '__fish_seen_subcommand_from env' -l system -d "The service's cache"
complete -c skillctl -n '__fish_seen_subcommand_from env' -l json -d 'Print JSON'
complete -c skillctl -n '__fish_seen_subcommand_from build' -l local -d 'Your own cache'
complete -c skillctl -n '__fish_seen_subcommand_from build' -l index-url -x -d 'The pip index'
complete -c skillctl -n '__fish_seen_subcommand_from build' -l find-links -r -a '(__fish_complete_directories)' -d 'A pip wheelhouse'
complete -c skillctl -n '__fish_seen_subcommand_from build' -l resolvers -x -d 'debian,pip,npm'
complete -c skillctl -n '__fish_seen_subcommand_from build' -l rebuild -d 'Build again'
complete -c skillctl -n '__fish_seen_subcommand_from gc' -l max-count -x -d 'Keep at most N'
complete -c skillctl -n '__fish_seen_subcommand_from gc' -l max-size -x -d 'Keep at most SIZE'
complete -c skillctl -n '__fish_seen_subcommand_from build' -a '(__fish_complete_directories) (__fish_complete_suffix .skill)'
