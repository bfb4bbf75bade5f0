#!/usr/bin/env bash
# Cuts a release: sets the version in every pom.xml, builds the agent jar and the fence libraries, writes their
# SHA-256 checksums and prepends a CHANGELOG.md entry. Publishes nothing (no deploy, no push, no tag): it prints the
# commands that would.
#
#   scripts/release.sh <version>                        in this working tree; artifacts in target/release/<version>/
#   scripts/release.sh <version> --dry-run [--out DIR]  in a copy of the working tree; the tree is left untouched,
#                                                       artifacts and the would-be CHANGELOG.md in DIR
#
# Artifacts: fencing-agent-<version>.jar (the -javaagent), fencing-fence-sql-, fencing-fence-http-,
# fencing-fence-kafka-, fencing-fence-spring-boot-starter-<version>.jar (the fence libraries) with the two they
# depend on, fencing-protocol- and fencing-fence-store-<version>.jar (all also installed in your local repository
# only if you run `mvn install` yourself), fencing-dashboards-<version>.jar, SHA256SUMS (`sha256sum -c SHA256SUMS`
# checks them), fencing-api-<version>.jar (the optional application API).
# RELEASE_MVN_ARGS adds Maven options (e.g. -o to build offline).
set -euo pipefail

usage() {
  echo "usage: $0 <version> [--dry-run [--out DIR]]   (version: 1.2.3, 1.2.3-rc.1; not a -SNAPSHOT)" >&2
  exit 2
}
[[ $# -ge 1 ]] || usage
version=$1
shift
dry_run=false
out=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dry-run) dry_run=true ;;
    --out) [[ $# -ge 2 ]] || usage; out=$2; shift ;;
    *) usage ;;
  esac
  shift
done
if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-.][0-9A-Za-z]+([.-][0-9A-Za-z]+)*)?$ ]] || [[ "$version" == *SNAPSHOT* ]]; then
  echo "release.sh: '$version' is not a release version: expected MAJOR.MINOR.PATCH with an optional suffix such as -rc.1, not a -SNAPSHOT" >&2
  exit 2
fi

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
current=$(sed -n '0,/<version>/s|.*<version>\(.*\)</version>.*|\1|p' "$root/pom.xml")
[[ -n "$current" ]] || { echo "release.sh: cannot read the version of $root/pom.xml" >&2; exit 1; }

if $dry_run; then
  out=${out:-$(mktemp -d "${TMPDIR:-/tmp}/fencing-release-$version.XXXXXX")}
  work=$(mktemp -d "${TMPDIR:-/tmp}/fencing-release-tree.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  # The working tree as it is (committed or not, untracked files too), without build output or ignored files.
  (cd "$root" && git ls-files -z --cached --others --exclude-standard | xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh \
    | tar --null -T - -cf -) | tar -xf - -C "$work"
else
  if [[ -n "$(cd "$root" && git status --porcelain)" ]]; then
    echo "release.sh: the working tree has uncommitted changes; commit or stash them first (or use --dry-run)" >&2
    exit 1
  fi
  work=$root
  out=${out:-$root/target/release/$version}
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

echo "== version $current -> $version (in $work)"
quoted=$(printf '%s' "$current" | sed 's/[.[\*^$/]/\\&/g')
for pom in $(cd "$work" && find . -name pom.xml -not -path '*/target/*'); do
  # Each pom names the project's version once: the parent's own, or each module's <parent> reference.
  sed -i "0,/<version>$quoted<\/version>/s||<version>$version</version>|" "$work/$pom"
done
left=$(cd "$work" && grep -rl --include=pom.xml -F "<version>$current</version>" . | grep -v /target/ || true)
[[ -z "$left" ]] || { echo "release.sh: $current is still named in: $left" >&2; exit 1; }

echo "== building the agent jar and the fence libraries"
# shellcheck disable=SC2086
(cd "$work" && mvn -B -ntp -q ${RELEASE_MVN_ARGS:-} package -Dmaven.test.skip=true \
  -pl agent/jar,fences/sql,fences/http,fences/kafka,fences/spring-boot-starter,dashboards,api -am)

cp "$work/agent/jar/target/fencing-agent.jar" "$out/fencing-agent-$version.jar"
for m in protocol:fencing-protocol fences/store:fencing-fence-store fences/sql:fencing-fence-sql \
  fences/http:fencing-fence-http fences/kafka:fencing-fence-kafka \
  fences/spring-boot-starter:fencing-fence-spring-boot-starter dashboards:fencing-dashboards api:fencing-api; do
  cp "$work/${m%%:*}/target/${m##*:}-$version.jar" "$out/"
done

manifest=$(unzip -p "$out/fencing-agent-$version.jar" META-INF/MANIFEST.MF | tr -d '\r' | sed -n 's/^Implementation-Version: //p')
[[ "$manifest" == "$version" ]] || { echo "release.sh: the agent jar's Implementation-Version is '$manifest', not $version" >&2; exit 1; }
said=$(java -jar "$out/fencing-agent-$version.jar" --version)
[[ "$said" == "fencing-agent $version "* ]] || { echo "release.sh: --version says '$said'" >&2; exit 1; }

(cd "$out" && rm -f SHA256SUMS && sha256sum -- *.jar > SHA256SUMS)

echo "== CHANGELOG.md"
last_tag=$(cd "$root" && git describe --tags --abbrev=0 --match 'v[0-9]*' 2>/dev/null || true)
{
  echo "## $version ($(date -u +%Y-%m-%d))"
  echo
  if [[ -n "$last_tag" ]]; then
    (cd "$root" && git log --no-merges --format='- %s' "$last_tag..HEAD")
  else
    echo "- First release: what it covers is listed under \"Unreleased\" below."
  fi
  echo
  echo "Artifacts (SHA-256):"
  echo
  sed 's/^\([0-9a-f]*\)  \(.*\)$/- `\2` `\1`/' "$out/SHA256SUMS"
  echo
} > "$out/changelog-entry.md"
changelog=$work/CHANGELOG.md
if [[ -f "$changelog" ]]; then
  # Below the title line, above the newest entry.
  { head -n 2 "$changelog"; cat "$out/changelog-entry.md"; tail -n +3 "$changelog"; } > "$changelog.new"
else
  { echo "# Changelog"; echo; cat "$out/changelog-entry.md"; } > "$changelog.new"
fi
mv "$changelog.new" "$changelog"
cp "$changelog" "$out/CHANGELOG.md"

echo "== release $version: $out"
ls -1 "$out"
if $dry_run; then
  echo "(dry run: the working tree is unchanged)"
else
  cat <<NEXT
Nothing was published. To publish:
  git commit -am "Release $version" && git tag v$version && git push origin HEAD v$version
  attach $out/* to the release on your Git host; deploy the Maven artifacts with
  mvn -B deploy -DskipTests -pl agent/jar,fences/sql,fences/http,fences/kafka,fences/spring-boot-starter -am   (with your repository in distributionManagement)
and move the poms to the next development version (<version>$version</version> -> <version>NEXT-SNAPSHOT</version>).
NEXT
fi
