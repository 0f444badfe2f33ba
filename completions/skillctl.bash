# bash completion for skillctl(1): verbs, options, run ids (skillctl list --quiet) and skill names
# (skillctl skill list --quiet: the user's skill folders and the service's installed skills).
# Installed to bash-completion's completionsdir, which loads it on the first "skillctl <TAB>".

# shellcheck disable=SC2207  # COMPREPLY=($(compgen ...)) is how completions fill it
__skillctl_verbs="run exec session env list status logs result artifacts cancel wait rm runs mcp skill"
__skillctl_skill_verbs="lint show package list install remove init tools"

# Run ids and skill names ask the service; a host without one answers nothing, quickly.
__skillctl_run_ids() {
    skillctl "${__skillctl_global[@]}" --no-ask-password list --quiet 2>/dev/null
}
__skillctl_skill_names() {
    skillctl "${__skillctl_global[@]}" --no-ask-password skill list --quiet 2>/dev/null
}

_skillctl() {
    local cur prev words cword
    if declare -F _init_completion >/dev/null; then
        _init_completion || return
    else
        cur=${COMP_WORDS[COMP_CWORD]}
        prev=${COMP_WORDS[COMP_CWORD - 1]}
        words=("${COMP_WORDS[@]}")
        cword=$COMP_CWORD
    fi

    local i verb="" sub="" verb_at=0
    __skillctl_global=()
    # The verb is the first word that is not a global option (or -H's argument).
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
        -H | --host)
            __skillctl_global+=("${words[i]}" "${words[i + 1]}")
            i=$((i + 1)) ;;
        --host=*) __skillctl_global+=("${words[i]}") ;;
        -*) ;;
        *)
            verb=${words[i]}
            verb_at=$i
            break ;;
        esac
    done
    if [[ $verb == skill || $verb == runs || $verb == session || $verb == env ]]; then
        for ((i = verb_at + 1; i < cword; i++)); do
            [[ ${words[i]} != -* ]] && { sub=${words[i]}; break; }
        done
    fi

    # Arguments of options.
    case $prev in
    -H | --host)
        COMPREPLY=($(compgen -A hostname -- "$cur"))
        return ;;
    --stream)
        COMPREPLY=($(compgen -W "stdout stderr" -- "$cur"))
        return ;;
    --lines)
        COMPREPLY=($(compgen -W "all 100 1000" -- "$cur"))
        return ;;
    --cwd)
        COMPREPLY=($(compgen -W "/work /skill" -- "$cur"))
        return ;;
    --lang)
        COMPREPLY=($(compgen -W "py js sh" -- "$cur"))
        return ;;
    --format)
        COMPREPLY=($(compgen -W "openai openai-responses anthropic mcp" -- "$cur"))
        return ;;
    --input-file | --file | --get)
        COMPREPLY=($(compgen -f -- "$cur"))
        return ;;
    --output-dir | -o | --output | --dir | --skills-dir | --find-links)
        COMPREPLY=($(compgen -d -- "$cur"))
        return ;;
    --script | --input | --timeout | --memory | --cpu | --tasks | --env | --older-than | --keep | \
        --session | --ttl | --quota | --index-url | --resolvers | --max-count | --max-size)
        return ;;
    esac

    local opts="" args=""
    case $verb in
    "")
        opts="-h --help --version -v --verbose -H --host --no-ask-password"
        args=$__skillctl_verbs ;;
    run | exec)
        if [[ $verb == run ]]; then
            opts="-h --help --script --input --input-file --file --output-dir --timeout --memory --cpu
                  --tasks --env --network --session --json -q --quiet --local --system"
        else
            opts="-h --help --cwd --input --input-file --file --output-dir --timeout --memory --cpu
                  --tasks --env --network --session --json -q --quiet --local --system"
        fi
        # Only the skill: what follows it (or --) belongs to the script.
        local n=0
        for ((i = verb_at + 1; i < cword; i++)); do
            case ${words[i]} in
            --) return ;;
            --script | --input | --input-file | --file | --output-dir | --timeout | --memory | --cpu | \
                --tasks | --env | --session | --cwd) i=$((i + 1)) ;;
            -*) ;;
            *) n=$((n + 1)) ;;
            esac
        done
        if [[ $n -eq 0 && $cur != -* ]]; then
            COMPREPLY=($(compgen -W "$(__skillctl_skill_names)" -- "$cur")
                       $(compgen -d -- "$cur") $(compgen -f -X '!*.skill' -- "$cur"))
            return
        fi
        [[ $n -gt 0 && $cur != -* ]] && return ;;
    session)
        case $sub in
        "") args="create list show rm" ;;
        create)
            opts="-h --help --ttl --quota --json --local --system"
            [[ $cur != -* ]] && args=$(__skillctl_skill_names) ;;
        list | show | rm) opts="-h --help --json --local --system" ;;
        esac ;;
    mcp) opts="-h --help --skills-dir --local --system" ;;
    env)
        case $sub in
        "") args="build list show rm gc" ;;
        build)
            opts="-h --help --local --system --index-url --find-links --resolvers --rebuild --json"
            COMPREPLY=($(compgen -d -- "$cur") $(compgen -f -X '!*.skill' -- "$cur")) ;;
        list) opts="-h --help --system --json" ;;
        show) opts="-h --help --system --json" ;;
        rm) opts="-h --help --system" ;;
        gc) opts="-h --help --max-count --max-size --system --json" ;;
        esac ;;
    list) opts="-h --help --all --json -q --quiet -n --lines" ;;
    status | result | wait)
        opts="-h --help --json"
        args=$(__skillctl_run_ids) ;;
    logs)
        opts="-h --help -f --follow --stream"
        args=$(__skillctl_run_ids) ;;
    artifacts)
        opts="-h --help --get -o --output --json"
        args=$(__skillctl_run_ids) ;;
    cancel | rm)
        opts="-h --help"
        args=$(__skillctl_run_ids) ;;
    runs)
        case $sub in
        "") args="prune" ;;
        prune) opts="-h --help --older-than --keep --dir --dry-run" ;;
        esac ;;
    skill)
        case $sub in
        "")
            opts="-h --help"
            args=$__skillctl_skill_verbs ;;
        lint)
            opts="-h --help --strict --json"
            COMPREPLY=($(compgen -d -- "$cur") $(compgen -f -X '!*.skill' -- "$cur")) ;;
        show)
            opts="-h --help --json"
            COMPREPLY=($(compgen -d -- "$cur") $(compgen -f -X '!*.skill' -- "$cur")) ;;
        package)
            opts="-h --help -o --output"
            COMPREPLY=($(compgen -d -- "$cur")) ;;
        list) opts="-h --help --json -q --quiet" ;;
        install)
            opts="-h --help --replace"
            COMPREPLY=($(compgen -d -- "$cur") $(compgen -f -X '!*.skill' -- "$cur")) ;;
        remove)
            opts="-h --help"
            args=$(__skillctl_skill_names) ;;
        init) opts="-h --help --lang" ;;
        tools)
            opts="-h --help --format"
            COMPREPLY=($(compgen -d -- "$cur") $(compgen -f -X '!*.skill' -- "$cur")) ;;
        esac ;;
    esac

    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    elif [[ -n $args ]]; then
        COMPREPLY+=($(compgen -W "$args" -- "$cur"))
    fi
}
complete -F _skillctl skillctl
