/*
 * SSDT loaded through ACPI configfs by test_acpi_aml.sh and the demo:
 * one device whose acpi_device appears when the table loads and goes
 * when it unloads.
 */
DefinitionBlock ("", "SSDT", 2, "LK45", "LK45TBL", 0x00000001)
{
    Scope (\_SB)
    {
        Device (LK45)
        {
            Name (_HID, "LKTS0045")
            Name (_UID, One)
        }
    }
}
