# bench/ref/peers.sh — sourced by bench/run.sh: what users would pick instead
# of zealgo, started beside it on the same endpoints. Node's raw `http`
# server (server.js) and nginx + PHP-FPM with OPcache (nginx.conf,
# php-fpm.conf, php.ini, php/*.php), each on a free 127.0.0.1 port (PHP-FPM
# on a unix socket), its PID added to run.sh's PIDS so that run.sh's cleanup
# stops it. Uses run.sh's log, apt_install, free_port, wait_port, note_cmd,
# REPO, WORK, ROOT and PIDS.
# shellcheck shell=bash

PEER_DIR=$REPO/bench/ref
NGINX=nginx
[ -x /usr/sbin/nginx ] && NGINX=/usr/sbin/nginx # not on a user's PATH

# peers_install installs what the wanted peers need and is missing
# (Debian packages).
peers_install() { # peers...
	local need=() p
	for p in "$@"; do
		case $p in
		node) command -v node >/dev/null 2>&1 || need+=(nodejs) ;;
		php)
			command -v "$NGINX" >/dev/null 2>&1 || need+=(nginx)
			php_fpm_bin >/dev/null || need+=(php-fpm)
			;;
		esac
	done
	if [ ${#need[@]} -gt 0 ]; then apt_install "${need[@]}"; fi
	[ -x /usr/sbin/nginx ] && NGINX=/usr/sbin/nginx
	return 0
}

php_fpm_bin() { # -> the newest /usr/sbin/php-fpmX.Y, or fails
	local b
	b=$(compgen -G '/usr/sbin/php-fpm[0-9]*' | sort -V | tail -1 || true)
	[ -n "$b" ] && echo "$b"
}

# as_unprivileged runs a command as nobody when the script runs as root
# (nginx and PHP-FPM would otherwise switch users or refuse), as the
# current user otherwise. Run in the background (`as_unprivileged cmd &`),
# it execs, as setpriv does: the PID in $! is the command's, which
# run.sh's cleanup stops.
as_unprivileged() {
	if [ "$(id -u)" = 0 ]; then
		exec setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"
	fi
	exec "$@"
}

# fill_template writes a config template of bench/ref with its @NAMES@ set.
fill_template() { # template out dir port sock children
	sed -e "s|@DIR@|$3|g" -e "s|@PORT@|$4|g" -e "s|@PUBLIC@|$ROOT/public|g" \
		-e "s|@PHP@|$3/php|g" -e "s|@SOCK@|$5|g" -e "s|@CHILDREN@|$6|g" "$PEER_DIR/$1" >"$2"
}

# start_node starts bench/ref/node/server.js; sets NPORT and NPID.
start_node() {
	NPORT=$(free_port)
	node "$PEER_DIR/node/server.js" "$NPORT" "$ROOT" >"$WORK/node.log" 2>&1 &
	NPID=$!; PIDS+=("$NPID")
	note_cmd "node bench/ref/node/server.js \$NPORT \$ROOT   # Node $(node --version), raw http, one process"
	wait_port "$NPORT"
	log "node pid $NPID port $NPORT"
}

# start_php starts PHP-FPM (PHP_CHILDREN static workers, on a unix socket)
# and nginx in front of it (a worker per core); sets PPORT, FPID, XPID.
start_php() {
	local dir=$WORK/peers fpm sock
	fpm=$(php_fpm_bin) || { log "no /usr/sbin/php-fpm*: install php-fpm"; return 1; }
	PPORT=$(free_port)
	sock=$dir/php-fpm.sock
	mkdir -p "$dir"
	cp -r "$PEER_DIR/php" "$dir/php"
	fill_template nginx.conf "$dir/nginx.conf" "$dir" "$PPORT" "$sock" "$PHP_CHILDREN"
	fill_template php-fpm.conf "$dir/php-fpm.conf" "$dir" "$PPORT" "$sock" "$PHP_CHILDREN"
	fill_template php.ini "$dir/php.ini" "$dir" "$PPORT" "$sock" "$PHP_CHILDREN"
	if [ "$(id -u)" = 0 ]; then # nobody must read the tree and write its own directory
		chmod 755 "$WORK"
		chmod -R a+rX "$ROOT/public"
		chown -R nobody "$dir"
	fi
	as_unprivileged "$fpm" -F -y "$dir/php-fpm.conf" -c "$dir/php.ini" >"$dir/php-fpm.out" 2>&1 &
	FPID=$!; PIDS+=("$FPID")
	note_cmd "$fpm -F -y \$WORK/peers/php-fpm.conf -c \$WORK/peers/php.ini   # bench/ref/php-fpm.conf, php.ini; pm static, $PHP_CHILDREN workers"
	for _ in $(seq 1 250); do [ -S "$sock" ] && break; sleep 0.02; done
	[ -S "$sock" ] || { log "php-fpm did not start: $(cat "$dir/php-fpm.out")"; return 1; }
	as_unprivileged "$NGINX" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" >"$dir/nginx.out" 2>&1 &
	XPID=$!; PIDS+=("$XPID")
	note_cmd "nginx -p \$WORK/peers -c \$WORK/peers/nginx.conf -e \$WORK/peers/error.log   # bench/ref/nginx.conf"
	wait_port "$PPORT" || { log "nginx did not start: $(cat "$dir/nginx.out" "$dir/error.log")"; return 1; }
	log "php-fpm pid $FPID, nginx pid $XPID port $PPORT"
}

# peer_versions describes the peers that run, for RESULTS.md.
peer_versions() {
	local v=()
	[ -n "${NPID:-}" ] && v+=("Node $(node --version), \`http\` module, one process")
	[ -n "${XPID:-}" ] && v+=("$("$NGINX" -v 2>&1 | sed 's/^nginx version: //'), worker_processes auto" \
		"$("$(php_fpm_bin)" -v | head -1 | cut -d' ' -f1-2) FPM, pm static $PHP_CHILDREN workers, OPcache: \`${OPCACHE:-not read}\`")
	[ ${#v[@]} -gt 0 ] || v=(none)
	local out=${v[0]} x
	for x in "${v[@]:1}"; do out+="; $x"; done
	echo "$out"
}
