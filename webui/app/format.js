// Formatting shared by the UI's modules.

// formatSize says n bytes the way people read them: 512 B, 3.9 KiB, 5.0 MiB.
export function formatSize(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
