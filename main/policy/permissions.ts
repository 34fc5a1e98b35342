// Permission requests (camera, microphone, notifications, geolocation, clipboard read, MIDI,
// HID, serial, ...) and permission checks: Power needs none, so every one is refused, whoever
// asks. The list of known names is for the log line only; unknown permissions are refused too.
export function permissionRequestDecision(_permission: string, _requestingUrl: string): boolean {
  return false;
}

export function permissionCheckDecision(_permission: string, _requestingOrigin: string): boolean {
  return false;
}

/** Device pickers (HID, serial, USB, Bluetooth): never grant a device. */
export function devicePermissionDecision(): boolean {
  return false;
}
