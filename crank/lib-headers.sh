# Sourced by the load jobs (wrk-job.sh, fixedrate-job.sh): the request header presets (benchmarks.yml's
# presetHeaders), one place for every load generator.
#   plaintext  crank's "plaintext" preset (its wrk and bombardier jobs): Accept and Connection: keep-alive
#   browser    what a desktop browser sends for a page navigation: eleven fields besides Host (the .NET team's proxy lab
#              drives proxies with a browser-like set; this one follows a current Chrome on Linux)
#   handshake  plaintext's Accept with "Connection: close": the server closes after each response and the load
#              opens a new connection for the next, so with https every request pays a full TLS handshake (the
#              handshake scenario: requests per second are handshakes per second)
#   none       only what the tool itself sends
# load_preset_headers NAME: sets the array PRESET_HEADERS ("Name: value" each); returns 1 for an unknown name.
load_preset_headers() {
  case "$1" in
    plaintext)
      PRESET_HEADERS=("Accept: text/plain,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7"
                      "Connection: keep-alive") ;;
    browser)
      PRESET_HEADERS=("Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
                      "Accept-Encoding: gzip, deflate, br"
                      "Accept-Language: en-US,en;q=0.9"
                      "Cache-Control: max-age=0"
                      "Connection: keep-alive"
                      "Cookie: session=6f1c9d2e8b7a4f30a5c1e2d3b4a59687; theme=light"
                      "Sec-Fetch-Dest: document"
                      "Sec-Fetch-Mode: navigate"
                      "Sec-Fetch-Site: none"
                      "Upgrade-Insecure-Requests: 1"
                      "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36") ;;
    handshake)
      PRESET_HEADERS=("Accept: text/plain,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7"
                      "Connection: close") ;;
    none|"") PRESET_HEADERS=() ;;
    *) return 1 ;;
  esac
}
